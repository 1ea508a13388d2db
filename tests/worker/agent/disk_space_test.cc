// tests/worker/agent/disk_space_test.cc
//
// What the agent reads to stop leasing on a full disk: the folder a trainer's message names, and the
// free bytes of a file system.
#include "worker/agent/disk_space.h"

#include <sys/statvfs.h>

#include <gtest/gtest.h>

namespace rung::agent {
namespace {

TEST(DiskSpaceTest, TheFolderOfTheNoSpaceMessagesPathIsFoundInAnyText) {
  EXPECT_EQ(NoSpaceFolder("rung-train failed: no space left on device at /data/ck/ckpt-2.pt.tmp.9 (while writing "
                          "it: No space left on device)"),
            "/data/ck");
  EXPECT_EQ(NoSpaceFolder("no space left on device at /a/b/file"), "/a/b");
  EXPECT_EQ(NoSpaceFolder("rung-train: data or checkpoint unusable"), std::nullopt);
}

TEST(DiskSpaceTest, FreeBytesAreThoseOfTheNearestExistingFolder) {
  const std::string temp = ::testing::TempDir();
  StatusOr<uint64_t> free = FreeBytesAt(temp + "/no/such/folder/yet");
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  struct statvfs stats {};
  ASSERT_EQ(::statvfs(temp.c_str(), &stats), 0);
  const uint64_t expected = static_cast<uint64_t>(stats.f_bavail) * stats.f_frsize;
  // The file system is shared: allow what others write meanwhile.
  EXPECT_NEAR(static_cast<double>(*free), static_cast<double>(expected), 64.0 * 1024 * 1024);
  if (*free > kMinFreeBytesToLease + (256u << 20)) EXPECT_TRUE(EnoughSpaceToLease(temp));
}

}  // namespace
}  // namespace rung::agent
