// tests/proto/law_report_proto_test.cc: a scaling-law report through the wire and back.
#include "proto/law_report_proto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sweeps/fit/law_format.h"

namespace rung::wire {
namespace {

// Two variants on an IsoFLOP grid of 3 budgets x 5 sizes, with noise: every part of the report is filled.
fit::LawRuns IsoflopRuns() {
  const fit::ChinchillaLaw rope{1.69, 406.4, 410.7, 0.34, 0.28};
  fit::ChinchillaLaw lerope = rope;
  lerope.a *= 0.9;
  std::mt19937_64 generator(5);
  std::normal_distribution<double> noise(0.0, 0.003);
  fit::LawRuns runs;
  runs.source = "wire";
  runs.metric = "val_loss";
  for (const auto& [name, law] : {std::make_pair("rope", rope), std::make_pair("lerope", lerope)}) {
    for (double c : {1e18, 1e19, 1e20}) {
      for (double factor : {0.25, 0.5, 1.0, 2.0, 4.0}) {
        const double n = rope.OptimalN(c) * factor, d = c / (6 * n);
        runs.runs.push_back({name, n, d, law.Predict(n, d) * std::exp(noise(generator)), std::nullopt,
                             std::string(name) + ":" + std::to_string(runs.runs.size())});
      }
    }
  }
  return runs;
}

TEST(LawReportProto, TheReportComesBackFromTheWireAsTheSameDocument) {
  fit::LawOptions options;
  options.baseline = "rope";
  options.bootstrap = 20;
  StatusOr<fit::LawReport> report = fit::FitLaws(IsoflopRuns(), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_TRUE(report->isoflop.has_value());
  ASSERT_TRUE(report->rollout.has_value());
  ASSERT_FALSE(report->multipliers.empty());
  v1::LawReport received;
  ASSERT_TRUE(received.ParseFromString(ToProto(*report).SerializeAsString()));
  const fit::LawReport back = FromProto(received);
  EXPECT_EQ(fit::LawReportToJson(back).dump(), fit::LawReportToJson(*report).dump());
  EXPECT_EQ(fit::FormatLawTable(back), fit::FormatLawTable(*report));
  EXPECT_EQ(fit::FormatLawCsv(back), fit::FormatLawCsv(*report));
}

}  // namespace
}  // namespace rung::wire
