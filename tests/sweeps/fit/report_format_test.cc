#include "sweeps/fit/report_format.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rung::fit {
namespace {

// base: -1 nat per decade then flat; v is inside the range at p1 and below it (undefined) at p3.
MultiplierReport HandReport() {
  LadderResults ladder;
  ladder.source = "hand.csv";
  ladder.runs = {{"base", "p1", 1e10, 4.0, std::nullopt, std::nullopt, ""},
                 {"base", "p2", 1e11, 3.0, std::nullopt, std::nullopt, ""},
                 {"base", "p3", 1e12, 3.0, std::nullopt, std::nullopt, ""},
                 {"v", "p1", 1e10, 3.5, std::nullopt, std::nullopt, ""},
                 {"v", "p2", 1e11, 2.95, std::nullopt, std::nullopt, ""},
                 {"v", "p3", 1e12, 2.9, std::nullopt, std::nullopt, ""}};
  MultiplierOptions options;
  options.baseline = "base";
  options.bootstrap = 0;
  options.e_grid = {0.0, 1.0};
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder, options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.value();
}

TEST(ReportFormat, JsonIsAListOfRowsWithTheRequiredKeys) {
  MultiplierReport report = HandReport();
  nlohmann::ordered_json rows = ReportToJson(report);
  ASSERT_TRUE(rows.is_array());
  // 4 estimators (piecewise, hermite, two power laws) x 6 points, then 2 E values x 6 points.
  ASSERT_EQ(rows.size(), 4u * 6u + 2u * 6u);
  for (const auto& row : rows) {
    for (const char* key : {"variant", "label", "compute", "loss", "estimator", "multiplier"}) {
      EXPECT_TRUE(row.contains(key)) << key << " in " << row.dump();
    }
    if (row["multiplier"].is_null()) EXPECT_TRUE(row.contains("undefined_reason")) << row.dump();
  }
  EXPECT_EQ(rows[0]["variant"], "base");
  EXPECT_EQ(rows[0]["estimator"], "piecewise");
  EXPECT_DOUBLE_EQ(rows[0]["multiplier"].get<double>(), 1.0);
  EXPECT_EQ(rows[3]["variant"], "v");
  EXPECT_NEAR(rows[3]["multiplier"].get<double>(), std::sqrt(10.0), 1e-9);
  EXPECT_TRUE(rows[5]["multiplier"].is_null());  // v p3: below the flat end
  EXPECT_EQ(rows.back()["role"], "e_sensitivity");
  EXPECT_DOUBLE_EQ(rows.back()["e"].get<double>(), 1.0);
  // The power-law rows carry their fit.
  EXPECT_EQ(rows[6]["estimator"], "hermite");
  EXPECT_TRUE(rows[12].contains("fit") || rows[12].contains("undefined_reason")) << rows[12].dump();
}

TEST(ReportFormat, TableNamesTheEstimatorsAndSaysWhyARowIsUndefined) {
  std::string table = FormatReportTable(HandReport());
  EXPECT_NE(table.find("baseline base; 2 variants (base, v) x 3 ladder points"), std::string::npos) << table;
  EXPECT_NE(table.find("Piecewise in ln C (as published)"), std::string::npos);
  EXPECT_NE(table.find("Power law, one E shared by all variants"), std::string::npos);
  EXPECT_NE(table.find("Power law, E free per variant"), std::string::npos);
  EXPECT_NE(table.find("Power-law fits: L = A * (C / 1.00e11)^-alpha + E"), std::string::npos) << table;
  EXPECT_NE(table.find("Power-law CM against a fixed E"), std::string::npos);
  EXPECT_NE(table.find("undefined"), std::string::npos);
  EXPECT_NE(table.find("last segment (p2-p3) is flat"), std::string::npos) << table;
  EXPECT_NE(table.find("(no intervals: one seed and 3 ladder points on a curve: an interval needs 2 seeds"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Notes"), std::string::npos);
  // Row of v at p1 in the piecewise table: CM 10^0.5.
  EXPECT_NE(table.find("3.162"), std::string::npos);
}

TEST(ReportFormat, CsvHasAHeaderAndOneLinePerRow) {
  MultiplierReport report = HandReport();
  std::string csv = FormatReportCsv(report);
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("variant,label,compute,loss,", 0), 0u) << header;
  size_t count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_EQ(count, report.rows.size() + report.e_sensitivity.size());
}

TEST(ReportFormat, ComputeIsWrittenCompactly) {
  EXPECT_EQ(FormatCompute(1.159641e12), "1.16e12");
  EXPECT_EQ(FormatCompute(1e15), "1.00e15");
  EXPECT_EQ(FormatCompute(9.996e11), "1.00e12");
  EXPECT_EQ(FormatCompute(3.5e9), "3.50e9");
}

TEST(ReportFormat, FormatNamesAreChecked) {
  EXPECT_EQ(ParseReportFormat("json").value(), ReportFormat::kJson);
  EXPECT_EQ(ParseReportFormat("table").value(), ReportFormat::kTable);
  EXPECT_EQ(ParseReportFormat("csv").value(), ReportFormat::kCsv);
  EXPECT_EQ(ParseReportFormat("yaml").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::fit
