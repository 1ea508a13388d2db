// fuzz/ladder_csv_fuzzer.cc
//
// libFuzzer target: the ladder CSV reader behind `rung fit --from-csv` and `rung plot --from-csv`
// (sweeps/fit/ladder_csv.h). The input is the file's text. ParseLadderCsv returns a ladder or an
// INVALID_ARGUMENT; a ladder it returns passed ValidateLadderResults, so the curves the estimators
// take are built from it as `rung fit` does (BuildCurves requires a valid ladder).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sweeps/fit/ladder_csv.h"
#include "sweeps/fit/ladder_results.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rung::StatusOr<rung::fit::LadderResults> ladder = rung::fit::ParseLadderCsv(text, "fuzz.csv");
  if (!ladder.ok()) {
    if (ladder.status().code() != rung::StatusCode::kInvalidArgument) {
      std::fprintf(stderr, "ladder_csv_fuzzer: not INVALID_ARGUMENT: %s\n", ladder.status().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  if (!rung::fit::ValidateLadderResults(*ladder).ok()) {
    std::fprintf(stderr, "ladder_csv_fuzzer: ParseLadderCsv returned a ladder that does not validate\n");
    std::abort();
  }
  for (const rung::fit::VariantCurve& curve : rung::fit::BuildCurves(*ladder)) {
    rung::fit::MeanCurve(curve);
    rung::fit::MeanSecondsCurve(curve);
    for (const rung::fit::LadderPoint& point : curve.points) {
      for (const auto& [seed, run] : point.seeds) rung::fit::SeedCurve(curve, seed);
    }
  }
  return 0;
}
