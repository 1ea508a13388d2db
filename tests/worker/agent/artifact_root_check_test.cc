// tests/worker/agent/artifact_root_check_test.cc
//
// CheckArtifactRoot on real folders: a root the coordinator marked passes, and leaves nothing behind;
// a missing marker (or root), another id, a marker that is not one or cannot be read, and a root
// this process cannot write each fail saying why, in the words of the agent's log line.
#include "worker/agent/artifact_root_check.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/artifact_root_marker.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::ScratchDir;
using ::testing::HasSubstr;

constexpr char kOtherId[] = "0123456789abcdef0123456789abcdef";

// Makes a folder unwritable even for root while it lives: mode 0555, and for root (whom modes do not
// stop) the file system's immutable flag. ok() is false where the flag could not be set.
class UnwritableFolder {
 public:
  explicit UnwritableFolder(const std::string& path) : path_(path) {
    ::chmod(path_.c_str(), 0555);
    if (::geteuid() != 0) {
      ok_ = true;
      return;
    }
    const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int flags = 0;
    if (fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
      flags |= FS_IMMUTABLE_FL;
      immutable_ = ok_ = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    if (fd >= 0) ::close(fd);
  }
  ~UnwritableFolder() {
    if (immutable_) {
      const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      int flags = 0;
      if (fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
        flags &= ~FS_IMMUTABLE_FL;
        ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
      }
      if (fd >= 0) ::close(fd);
    }
    ::chmod(path_.c_str(), 0755);
  }
  UnwritableFolder(const UnwritableFolder&) = delete;
  UnwritableFolder& operator=(const UnwritableFolder&) = delete;
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
  bool immutable_ = false;
};

class ArtifactRootCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.Path("artifacts");
    StatusOr<ArtifactRootMarker> marker = EnsureArtifactRootMarker(root_);
    ASSERT_TRUE(marker.ok()) << marker.status().ToString();
    id_ = marker->id;
  }

  ScratchDir scratch_;
  std::string root_;
  std::string id_;
};

TEST_F(ArtifactRootCheckTest, TheCoordinatorsMarkedRootPassesAndKeepsOnlyItsMarker) {
  Status mounted = CheckArtifactRoot(root_, id_);
  EXPECT_TRUE(mounted.ok()) << mounted.ToString();
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(root_)) names.push_back(entry.path().filename());
  EXPECT_THAT(names, ::testing::ElementsAre(".rung-artifact-root")) << "the write check's file was removed";
}

TEST_F(ArtifactRootCheckTest, AFolderWithoutTheMarkerIsNotTheRoot) {
  std::filesystem::remove(ArtifactRootMarkerPath(root_));
  Status mounted = CheckArtifactRoot(root_, id_);
  EXPECT_EQ(mounted.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mounted.message(), "no .rung-artifact-root: No such file or directory");
}

TEST_F(ArtifactRootCheckTest, ARootThatIsNotThereOrUnderAFileIsNotTheRoot) {
  EXPECT_EQ(CheckArtifactRoot(scratch_.Path("absent"), id_).message(),
            "no .rung-artifact-root: No such file or directory");
  testing::WriteFile(scratch_.Path("a-file"), "x");
  EXPECT_EQ(CheckArtifactRoot(scratch_.Path("a-file/artifacts"), id_).message(),
            "no .rung-artifact-root: Not a directory");
}

TEST_F(ArtifactRootCheckTest, AMarkerOfAnotherIdIsAnotherRoot) {
  Status mounted = CheckArtifactRoot(root_, kOtherId);
  EXPECT_EQ(mounted.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mounted.message(), "it holds id " + id_ + ", the coordinator's is " + kOtherId);
}

TEST_F(ArtifactRootCheckTest, AMarkerThatIsNotOneOrCannotBeReadSaysWhy) {
  const std::string marker = ArtifactRootMarkerPath(root_);
  testing::WriteFile(marker, "garbage\n");
  Status mounted = CheckArtifactRoot(root_, id_);
  EXPECT_EQ(mounted.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mounted.message(), "its .rung-artifact-root cannot be used: " + marker +
                                   " is not an artifact root marker: not JSON");

  std::filesystem::remove(marker);
  std::filesystem::create_directory(marker);  // there, but no file
  mounted = CheckArtifactRoot(root_, id_);
  EXPECT_EQ(mounted.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(mounted.message(), HasSubstr(marker + " is not a regular file"));
}

TEST_F(ArtifactRootCheckTest, ARootThisProcessCannotWriteIsNotUsable) {
  UnwritableFolder unwritable(root_);
  if (!unwritable.ok()) {
    GTEST_SKIP() << "running as root on a file system without the immutable flag (or without "
                    "CAP_LINUX_IMMUTABLE): no way to make " << root_ << " unwritable to this process";
  }
  Status mounted = CheckArtifactRoot(root_, id_);
  EXPECT_EQ(mounted.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mounted.message(), ::geteuid() == 0 ? "not writable: Operation not permitted"
                                                : "not writable: Permission denied");
}

TEST(ArtifactRootLinesTest, TheLinesNameTheRootWhyAndWhatTheWorkerDoes) {
  EXPECT_EQ(ArtifactRootNotMountedLine("/srv/rung/artifacts",
                                       Status::FailedPrecondition("no .rung-artifact-root: No such file or directory")),
            "the coordinator's artifact root /srv/rung/artifacts is not mounted here (no .rung-artifact-root: No such "
            "file or directory): this worker leases nothing until it is; checked again every 10 s");
  EXPECT_EQ(ArtifactRootMountedAgainLine("/srv/rung/artifacts"),
            "the coordinator's artifact root /srv/rung/artifacts is mounted here again: leasing resumes");
}

}  // namespace
}  // namespace rung::agent
