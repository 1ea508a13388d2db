// tests/core/hf/python_reference_fixture.h
//
// A test that compares rung with the independent Python references of tests/hf (Debian's python3-torch):
// each test has its own temporary folder, folder_, removed after it, and RunPython runs a script of
// tests/hf there, failing the test (with the script's stderr) where the script fails.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

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

  std::filesystem::path folder_;
};

}  // namespace rung
