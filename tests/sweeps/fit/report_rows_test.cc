// tests/sweeps/fit/report_rows_test.cc: a fit's result rows and their JSON codec.
#include "sweeps/fit/report_rows.h"

#include <gtest/gtest.h>

#include "sweeps/fit/report_format.h"

namespace rung::fit {
namespace {

// Two seeds with seconds and a bootstrap: every kind of field a row can carry is set somewhere.
MultiplierReport SeededReport() {
  LadderResults ladder;
  ladder.source = "seeded.csv";
  const double computes[] = {1e10, 1e11, 1e12};
  const double base[] = {4.0, 3.2, 2.7}, variant[] = {3.7, 3.0, 2.6};
  for (int64_t seed : {1, 2}) {
    for (int point = 0; point < 3; ++point) {
      const std::string label = "p" + std::to_string(point + 1);
      const double noise = 0.01 * static_cast<double>(seed);
      ladder.runs.push_back({"base", label, computes[point], base[point] + noise, seed, 100.0 * (point + 1), ""});
      ladder.runs.push_back({"v", label, computes[point], variant[point] - noise, seed, 90.0 * (point + 1), ""});
    }
  }
  MultiplierOptions options;
  options.baseline = "base";
  options.bootstrap = 50;
  options.seed = 7;
  options.fixed_e = 1.0;
  options.e_grid = {0.5, 1.0};
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder, options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.value();
}

TEST(ReportRows, ReadBackGivesTheSameDocument) {
  const nlohmann::ordered_json written = ReportToJson(SeededReport());
  StatusOr<std::vector<ReportRow>> rows = ReportRowsFromJson(nlohmann::json::parse(written.dump()));
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(ReportRowsToJson(*rows).dump(), written.dump());
  // The document exercises the nested fields, not only the flat ones.
  bool interval = false, paired = false, law = false, seconds = false, strata = false;
  for (const ReportRow& row : *rows) {
    interval |= row.interval.has_value();
    strata |= !row.gap_strata.empty() && row.gap_strata[0].seeds == 2 && row.gap_strata[0].variance > 0;
    paired |= row.paired_multiplier.has_value() && row.paired_multiplier->sd.has_value();
    law |= row.fit.has_value();
    seconds |= row.seconds.has_value() && row.wallclock_multiplier.has_value();
  }
  EXPECT_TRUE(interval && paired && law && seconds && strata);
  // gap_strata is written only where a row has a seed interval, as [{label, seeds, variance}].
  for (const nlohmann::ordered_json& row : written) {
    const bool seed_interval = row.contains("interval") && row["interval"]["unit"] == "seeds";
    EXPECT_EQ(row.contains("gap_strata"), seed_interval) << row.dump();
    if (row.contains("gap_strata")) {
      EXPECT_EQ(row["gap_strata"][0].size(), 3u);
      EXPECT_TRUE(row["gap_strata"][0].contains("label") && row["gap_strata"][0].contains("variance"));
    }
  }
}

TEST(ReportRows, AMissingKeyOrAWrongTypeIsAnErrorNamingIt) {
  const nlohmann::ordered_json written = ReportToJson(SeededReport());
  nlohmann::json rows = nlohmann::json::parse(written.dump());
  rows[2].erase("estimator");
  StatusOr<std::vector<ReportRow>> read = ReportRowsFromJson(rows);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "row 2: 'estimator' is missing");

  rows = nlohmann::json::parse(written.dump());
  for (nlohmann::json& row : rows) {
    if (row.contains("interval")) {
      row["interval"]["low"] = "0.9";
      break;
    }
  }
  read = ReportRowsFromJson(rows);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("'interval': 'low' must be a number"), std::string::npos)
      << read.status().message();
  EXPECT_FALSE(ReportRowsFromJson(nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace rung::fit
