// tests/proto/fit_report_proto_test.cc: a fit's result rows through the wire and back.
#include "proto/fit_report_proto.h"

#include <gtest/gtest.h>

#include "sweeps/fit/report_format.h"

namespace rung::wire {
namespace {

TEST(FitReportProto, EveryRowComesBackFromTheWireAsTheSameDocument) {
  fit::LadderResults ladder;
  ladder.source = "wire.csv";
  const double computes[] = {1e10, 1e11, 1e12};
  for (int64_t seed : {1, 2}) {
    for (int point = 0; point < 3; ++point) {
      const std::string label = "p" + std::to_string(point + 1);
      const double noise = 0.01 * static_cast<double>(seed);
      ladder.runs.push_back({"base", label, computes[point], 4.0 - 0.6 * point + noise, seed, 10.0 * (point + 1), ""});
      ladder.runs.push_back({"v", label, computes[point], 3.8 - 0.55 * point - noise, seed, 9.0 * (point + 1), ""});
    }
  }
  fit::MultiplierOptions options;
  options.baseline = "base";
  options.bootstrap = 20;
  options.fixed_e = 1.0;
  options.e_grid = {0.5, 1.0};
  StatusOr<fit::MultiplierReport> report = fit::ComputeMultipliers(ladder, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::vector<fit::ReportRow> rows = fit::ReportRows(*report);
  std::vector<fit::ReportRow> back;
  for (const fit::ReportRow& row : rows) {
    v1::FitReportRow received;
    ASSERT_TRUE(received.ParseFromString(ToProto(row).SerializeAsString()));
    back.push_back(FromProto(received));
  }
  EXPECT_EQ(fit::ReportRowsToJson(back).dump(), fit::ReportToJson(*report).dump());
}

}  // namespace
}  // namespace rung::wire
