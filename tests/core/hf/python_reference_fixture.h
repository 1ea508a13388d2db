// tests/core/hf/python_reference_fixture.h
//
// A test that compares rung with the independent Python references of tests/hf (Debian's python3-torch):
// each test has its own temporary folder, folder_, removed after it; RunPython runs a script of tests/hf
// there, and TrainCheckpoints a real rung-train run (RUNG_TRAIN_BINARY), each failing the test (with
// what the program said) where it fails.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"

namespace rung {

class PythonReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = std::filesystem::temp_directory_path() /
              ("rung_" + std::string(test->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" + test->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // Runs tests/hf/`script` with `arguments`, its stdout into the file `out` where given.
  void RunPython(const std::string& script, const std::string& arguments, const std::string& out = "") {
    const std::string command = "/usr/bin/python3 " + std::string(RUNG_SOURCE_DIR) + "/tests/hf/" + script + " " +
                                arguments + (out.empty() ? "" : " >" + out) + " 2>" + (folder_ / "stderr").string();
    const int status = std::system(command.c_str());
    std::string stderr_text;
    (void)ReadFileBytes((folder_ / "stderr").string(), "stderr", &stderr_text);
    ASSERT_EQ(status, 0) << command << "\n" << stderr_text;
  }

  // Trains the trial config `trial` with rung-train into Checkpoints().
  void TrainCheckpoints(const nlohmann::json& trial) {
    const std::string config = (folder_ / "trial.json").string();
    std::ofstream(config) << trial.dump();
    const std::string command = BinaryFolder() + "/rung-train --config " + config + " --checkpoint-dir " + Checkpoints() + " >" +
                                (folder_ / "train.out").string() + " 2>&1";
    std::string output;
    const int status = std::system(command.c_str());
    (void)ReadFileBytes((folder_ / "train.out").string(), "train.out", &output);
    ASSERT_EQ(status, 0) << command << "\n" << output;
  }
  std::string Checkpoints() const { return (folder_ / "checkpoints").string(); }
  // Where rung-train and rung's other programs are.
  static std::string BinaryFolder() {
    const std::string train = RUNG_TRAIN_BINARY;
    return train.substr(0, train.rfind('/'));
  }

  std::filesystem::path folder_;
};

}  // namespace rung
