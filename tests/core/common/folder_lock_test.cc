// FolderLock: one writer of a folder at a time, the refusal naming the holder's pid, the lock gone with
// its holder (released, or the process ended without releasing it).
#include "core/common/folder_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace rung {
namespace {

class FolderLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "folder_lock_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    folder_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string folder_;
};

TEST_F(FolderLockTest, ASecondHolderIsRefusedWithTheFirstsPidUntilItLetsGo) {
  {
    StatusOr<FolderLock> first = FolderLock::Acquire(folder_, "test writer");
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    StatusOr<FolderLock> second = FolderLock::Acquire(folder_, "test writer");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(second.status().message(),
              "another test writer is writing " + folder_ + " (pid " + std::to_string(::getpid()) + ")");
  }
  EXPECT_TRUE(FolderLock::Acquire(folder_, "test writer").ok());
}

TEST_F(FolderLockTest, AHolderThatExitsWithoutLettingGoLeavesTheFolderFree) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StatusOr<FolderLock> held = FolderLock::Acquire(folder_, "test writer");
    ::_exit(held.ok() ? 0 : 1);  // no destructor runs
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(FolderLock::Acquire(folder_, "test writer").ok());
}

TEST_F(FolderLockTest, AFolderThatDoesNotExistIsInternal) {
  EXPECT_EQ(FolderLock::Acquire(folder_ + "/missing", "test writer").status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace rung
