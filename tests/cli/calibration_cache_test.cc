#include "coordinator/cli/calibration_cache.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_process.h"

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

class CalibrationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rung_calibration_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "rung" / "calibration.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteCache(const std::string& text) {
    fs::create_directories(fs::path(path_).parent_path());
    std::ofstream(path_, std::ios::binary) << text;
  }
  static Calibration Example(const std::string& key) {
    Calibration calibration;
    calibration.key = key;
    calibration.measured_at = "2024-05-01 10:00:00Z";
    calibration.blas_kernel = "Cooperlake (rung)";
    calibration.points = {{"L1-d32 T128 B32", 1e5, 1e9, 2.0}, {"L3-d64 T128 B32", 1e6, 4e9, 3.0}};
    return calibration;
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(CalibrationCacheTest, WritesAndReadsBackAnEntryPerKey) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(WriteCalibration(path_, Example("a"), &warnings).ok());
  ASSERT_TRUE(WriteCalibration(path_, Example("b"), &warnings).ok());
  EXPECT_TRUE(warnings.empty());
  std::optional<Calibration> read = ReadCalibration(path_, "a", &warnings);
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->points.size(), 2u);
  EXPECT_EQ(read->points[1].shape, "L3-d64 T128 B32");
  EXPECT_EQ(read->measured_at, "2024-05-01 10:00:00Z");
  EXPECT_EQ(read->blas_kernel, "Cooperlake (rung)");
  EXPECT_TRUE(ReadCalibration(path_, "b", &warnings).has_value());
  EXPECT_FALSE(ReadCalibration(path_, "c", &warnings).has_value());
  EXPECT_TRUE(warnings.empty());
  // No temporary file is left beside the cache.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(path_).parent_path())) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(CalibrationCacheTest, AShapeMeasuredAgainReplacesItsPointAndOthersStay) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(WriteCalibration(path_, Example("a"), &warnings).ok());
  Calibration again = Example("a");
  again.points = {{"L1-d32 T128 B32", 1e5, 2e9, 1.0}};
  ASSERT_TRUE(WriteCalibration(path_, again, &warnings).ok());
  std::optional<Calibration> read = ReadCalibration(path_, "a", &warnings);
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->points.size(), 2u);
  EXPECT_EQ(read->points[0].flops_per_sec, 2e9);
  EXPECT_EQ(read->points[1].flops_per_sec, 4e9);
}

TEST_F(CalibrationCacheTest, PointsMeasuredOnAnotherBlasKernelAreReplacedNotMerged) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(WriteCalibration(path_, Example("a"), &warnings).ok());
  Calibration other = Example("a");
  other.blas_kernel = "SkylakeX (environment)";
  other.points = {{"L1-d32 T128 B32", 1e5, 5e8, 1.0}};
  ASSERT_TRUE(WriteCalibration(path_, other, &warnings).ok());
  std::optional<Calibration> read = ReadCalibration(path_, "a", &warnings);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->blas_kernel, "SkylakeX (environment)");
  ASSERT_EQ(read->points.size(), 1u);
  EXPECT_EQ(read->points[0].flops_per_sec, 5e8);
}

TEST_F(CalibrationCacheTest, SecondsInterpolateInLogFlopsPerTokenAndHoldTheEnds) {
  const Calibration calibration = Example("a");
  EXPECT_DOUBLE_EQ(calibration.Seconds(1e5, 1e10), 1e10 / 1e9 + 2.0);
  EXPECT_DOUBLE_EQ(calibration.Seconds(1e4, 1e10), 1e10 / 1e9 + 2.0);  // below the points: the first
  EXPECT_DOUBLE_EQ(calibration.Seconds(1e7, 4e10), 4e10 / 4e9 + 3.0);  // above: the last
  // Halfway in ln: rate 2.5e9, fixed 2.5 s.
  EXPECT_NEAR(calibration.Seconds(std::sqrt(1e5 * 1e6), 5e10), 5e10 / 2.5e9 + 2.5, 1e-9);
}

TEST_F(CalibrationCacheTest, AMissingCacheIsNoWarning) {
  std::vector<std::string> warnings;
  EXPECT_FALSE(ReadCalibration(path_, "a", &warnings).has_value());
  EXPECT_TRUE(warnings.empty());
}

// Hostile content: every shape of bad file is ignored with a warning that says what, never a crash;
// a later write replaces it with a good file.
TEST_F(CalibrationCacheTest, HostileContentIsIgnoredWithAWarning) {
  const std::vector<std::string> hostile = {
      "",
      "not json {",
      "[1, 2, 3]",
      "{\"version\": 2, \"entries\": []}",
      "{\"version\": 1, \"entries\": {\"key\": \"a\"}}",
      "{\"version\": 1, \"entries\": [7, null, {\"key\": 5}]}",
      "{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": \"fast\"}]}",
      "{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": [{\"flops_per_token\": -1, \"flops_per_sec\": 1e9, "
      "\"seconds_per_trial\": 1}]}]}",
      "{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": [{\"flops_per_token\": 1e5, \"flops_per_sec\": 0, "
      "\"seconds_per_trial\": 1}]}]}",
      "{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": [{\"flops_per_token\": 1e5, \"flops_per_sec\": \"1e9\", "
      "\"seconds_per_trial\": 1}]}]}",
      "{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": [{\"flops_per_token\": 1e5, \"flops_per_sec\": 1e9, "
      "\"seconds_per_trial\": 1e300}]}]}",
      std::string(64, '[') + std::string(64, ']'),
      std::string((1 << 20) + 1, ' '),
  };
  for (const std::string& text : hostile) {
    WriteCache(text);
    std::vector<std::string> warnings;
    EXPECT_FALSE(ReadCalibration(path_, "a", &warnings).has_value()) << text.substr(0, 80);
    EXPECT_FALSE(warnings.empty()) << text.substr(0, 80);
    if (!warnings.empty()) {
      EXPECT_NE(warnings[0].find(path_), std::string::npos) << warnings[0];
    }
  }
  // A good point beside a bad one: the good one is used, the bad one named.
  WriteCache("{\"version\": 1, \"entries\": [{\"key\": \"a\", \"points\": [{\"flops_per_token\": 1e5, "
             "\"flops_per_sec\": 1e9, \"seconds_per_trial\": 1}, {\"flops_per_token\": \"x\"}]}]}");
  std::vector<std::string> warnings;
  std::optional<Calibration> read = ReadCalibration(path_, "a", &warnings);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->points.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("point 1"), std::string::npos) << warnings[0];
  // Writing over a hostile file leaves a good one.
  WriteCache("not json {");
  ASSERT_TRUE(WriteCalibration(path_, Example("a"), &warnings).ok());
  warnings.clear();
  EXPECT_TRUE(ReadCalibration(path_, "a", &warnings).has_value());
  EXPECT_TRUE(warnings.empty());
}

TEST(CalibrationKey, NamesTheThreadsAndTheBuild) {
  const std::string key = CalibrationKey(3);
  EXPECT_NE(key.find("threads=3;"), std::string::npos) << key;
  EXPECT_NE(key.find("host="), std::string::npos) << key;
  EXPECT_NE(key.find("build="), std::string::npos) << key;
}

// rung validate, as a process, against a calibration measured on this trainer's BLAS kernel and on
// another one. The trainer is the stand-in, whose kernel line says it has no BLAS.
TEST_F(CalibrationCacheTest, ValidateUsesACalibrationOnlyOnTheBlasKernelItWasMeasuredOn) {
  const std::vector<std::string> environment = [&] {
    std::vector<std::string> variables = cli::testing::EnvironmentWithout({"RUNG_", "XDG_CACHE_HOME="});
    variables.push_back("XDG_CACHE_HOME=" + dir_.string());
    return variables;
  }();
  const std::vector<std::string> validate = {RUNG_CLI_BINARY, "validate", "sweeps/examples/quickstart.yaml",
                                             "--trainer", RUNG_STAND_IN_BINARY};
  std::vector<std::string> warnings;
  Calibration same = Example(CalibrationKey(1));  // quickstart's trials run on 1 thread
  same.blas_kernel = "no BLAS";
  ASSERT_TRUE(WriteCalibration(path_, same, &warnings).ok());
  cli::testing::CommandResult used = cli::testing::RunProcess(validate, environment, "", RUNG_SOURCE_DIR);
  EXPECT_EQ(used.exit_code, 0) << used.err;
  EXPECT_NE(used.out.find("calibrated on this machine at 1 thread(s) per trainer on BLAS kernel no BLAS"),
            std::string::npos) << used.out;

  Calibration other = Example(CalibrationKey(1));
  other.blas_kernel = "Cooperlake (rung)";
  ASSERT_TRUE(WriteCalibration(path_, other, &warnings).ok());
  cli::testing::CommandResult unused = cli::testing::RunProcess(validate, environment, "", RUNG_SOURCE_DIR);
  EXPECT_EQ(unused.exit_code, 0) << unused.err;
  EXPECT_NE(unused.err.find("was measured on BLAS kernel Cooperlake (rung), and rung-train now runs no BLAS: not used"),
            std::string::npos) << unused.err;
  EXPECT_NE(unused.out.find("uncalibrated"), std::string::npos) << unused.out;
}

}  // namespace
}  // namespace rung::cli
