// OutputFile and WriteFileAtomically (core/common/atomic_file.h): a regular file replaced whole with
// its mode kept, a symbolic link written through (the link stays a link), devices and FIFOs written
// in place with their errors reported (/dev/full: ENOSPC, nothing replaced), and what may not be
// written refused and left alone (a 0444 file, a folder, a socket), no temporary file left behind.
#include "core/common/atomic_file.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "atomic_file_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    folder_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(folder_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(folder_, ignored);
  }
  std::string Path(const std::string& name) const { return folder_ + "/" + name; }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  static mode_t ModeOf(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 ? info.st_mode : 0;
  }
  // The names in the folder: a temporary file left behind shows here.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string folder_;
};

TEST_F(AtomicFileTest, ANewFileGetsTheUmaskModeAndNoTemporaryFileStays) {
  const mode_t old = ::umask(027);
  const Status status = WriteFileAtomically(Path("new.csv"), {"a,", "b\n"});
  ::umask(old);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Read(Path("new.csv")), "a,b\n");
  EXPECT_EQ(ModeOf(Path("new.csv")) & 07777, mode_t{0640});
  EXPECT_EQ(Names(), std::vector<std::string>{"new.csv"});
}

TEST_F(AtomicFileTest, AnExistingFileIsReplacedWholeAndKeepsItsMode) {
  Write(Path("old.csv"), "old content that is longer\n");
  ASSERT_EQ(::chmod(Path("old.csv").c_str(), 0600), 0);
  const Status status = WriteFileAtomically(Path("old.csv"), {"new\n"});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Read(Path("old.csv")), "new\n");
  EXPECT_EQ(ModeOf(Path("old.csv")) & 07777, mode_t{0600});
  EXPECT_EQ(Names(), std::vector<std::string>{"old.csv"});
}

TEST_F(AtomicFileTest, ASymbolicLinkIsWrittenThroughAndStaysALink) {
  ASSERT_TRUE(fs::create_directory(Path("elsewhere")));
  Write(Path("elsewhere/target.csv"), "old\n");
  fs::create_symlink("elsewhere/target.csv", Path("link.csv"));  // relative, to the link's folder
  fs::create_symlink(Path("link.csv"), Path("link-to-link.csv"));
  const Status status = WriteFileAtomically(Path("link-to-link.csv"), {"through\n"});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("link-to-link.csv"))));
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("link.csv"))));
  EXPECT_EQ(Read(Path("elsewhere/target.csv")), "through\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(Path("elsewhere")), fs::directory_iterator()), 1);
}

TEST_F(AtomicFileTest, ADanglingLinkCreatesItsTarget) {
  fs::create_symlink("made.csv", Path("dangling.csv"));
  const Status status = WriteFileAtomically(Path("dangling.csv"), {"made\n"});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("dangling.csv"))));
  EXPECT_EQ(Read(Path("made.csv")), "made\n");
}

TEST_F(AtomicFileTest, AReadOnlyFileIsRefusedNamingItAndLeftAlone) {
  // Root may write anything by access(): the file's own write bits decide for root too.
  Write(Path("frozen.csv"), "keep\n");
  ASSERT_EQ(::chmod(Path("frozen.csv").c_str(), 0444), 0);
  const Status status = WriteFileAtomically(Path("frozen.csv"), {"lost\n"});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(Path("frozen.csv")));
  EXPECT_THAT(status.message(), HasSubstr("read-only (mode 0444)"));
  EXPECT_EQ(Read(Path("frozen.csv")), "keep\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"frozen.csv"});
}

TEST_F(AtomicFileTest, AReadOnlyFileBehindALinkIsRefusedToo) {
  Write(Path("frozen.csv"), "keep\n");
  ASSERT_EQ(::chmod(Path("frozen.csv").c_str(), 0444), 0);
  fs::create_symlink("frozen.csv", Path("link.csv"));
  const Status status = WriteFileAtomically(Path("link.csv"), {"lost\n"});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("a link to"));
  EXPECT_EQ(Read(Path("frozen.csv")), "keep\n");
}

TEST_F(AtomicFileTest, DevFullIsWrittenInPlaceAndItsNoSpaceErrorReported) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  fs::create_symlink("/dev/full", Path("full"));
  for (const std::string& path : {std::string("/dev/full"), Path("full")}) {
    SCOPED_TRACE(path);
    const Status status = WriteFileAtomically(path, {"x\n"});
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
    EXPECT_THAT(status.message(), HasSubstr("No space left on device"));
    EXPECT_THAT(status.message(), HasSubstr(path));
    EXPECT_TRUE(S_ISCHR(ModeOf("/dev/full")));
  }
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("full"))));
  EXPECT_EQ(Names(), std::vector<std::string>{"full"});
}

TEST_F(AtomicFileTest, DevNullIsWrittenInPlace) {
  StatusOr<OutputFile> file = OutputFile::Open("/dev/null");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_TRUE(file->in_place());
  EXPECT_TRUE(file->Write("anything").ok());
  const Status committed = file->Commit();
  EXPECT_TRUE(committed.ok()) << committed.ToString();
  EXPECT_TRUE(S_ISCHR(ModeOf("/dev/null")));
}

TEST_F(AtomicFileTest, AFifoIsWrittenInPlaceToItsReader) {
  ASSERT_EQ(::mkfifo(Path("pipe").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = Read(Path("pipe")); });  // opening blocks until the writer opens
  const Status status = WriteFileAtomically(Path("pipe"), {"through ", "the pipe\n"});
  reader.join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(received, "through the pipe\n");
  EXPECT_TRUE(S_ISFIFO(ModeOf(Path("pipe"))));
  EXPECT_EQ(Names(), std::vector<std::string>{"pipe"});
}

TEST_F(AtomicFileTest, AnOpenFileNamedThroughDevFdIsAppendedToInPlace) {
  // `--out /dev/stdout > FILE`: the shell's open file gets the output; FILE is not replaced.
  const int fd = ::open(Path("redirected.csv").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "first\n", 6), 6);
  struct stat before {};
  ASSERT_EQ(::fstat(fd, &before), 0);
  for (const std::string& path : {"/dev/fd/" + std::to_string(fd), "/proc/self/fd/" + std::to_string(fd)}) {
    SCOPED_TRACE(path);
    StatusOr<OutputFile> file = OutputFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_TRUE(file->in_place());
    EXPECT_TRUE(file->Write("more\n").ok());
    EXPECT_TRUE(file->Commit().ok());
  }
  ::close(fd);
  struct stat after {};
  ASSERT_EQ(::stat(Path("redirected.csv").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(Read(Path("redirected.csv")), "first\nmore\nmore\n");
}

TEST_F(AtomicFileTest, AFolderIsRefused) {
  ASSERT_TRUE(fs::create_directory(Path("folder")));
  const Status status = WriteFileAtomically(Path("folder"), {"x"});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(Path("folder") + ": it is a folder"));
  EXPECT_TRUE(fs::is_directory(Path("folder")));
  EXPECT_TRUE(fs::is_empty(Path("folder")));
}

TEST_F(AtomicFileTest, ASocketIsRefused) {
  const std::string path = Path("socket");
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) GTEST_SKIP() << "temporary folder too deep for a socket";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const Status status = WriteFileAtomically(path, {"x"});
  ::close(fd);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("it is a socket"));
  EXPECT_TRUE(fs::is_socket(path));
}

TEST_F(AtomicFileTest, AMissingFolderIsBadInput) {
  const Status status = WriteFileAtomically(Path("no/such/folder.csv"), {"x"});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("No such file or directory"));
}

TEST_F(AtomicFileTest, AnAbandonedWriteLeavesTheOldFileAndNoTemporaryFile) {
  Write(Path("kept.csv"), "old\n");
  {
    StatusOr<OutputFile> file = OutputFile::Open(Path("kept.csv"));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_FALSE(file->in_place());
    ASSERT_TRUE(file->Write("half of the n").ok());
    EXPECT_EQ(Names().size(), 2u);  // the temporary file beside it
  }
  EXPECT_EQ(Read(Path("kept.csv")), "old\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"kept.csv"});
}

TEST_F(AtomicFileTest, CommitTwiceIsRefused) {
  StatusOr<OutputFile> file = OutputFile::Open(Path("once.csv"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(file->Commit().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(file->Write("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Read(Path("once.csv")), "");
}

}  // namespace
}  // namespace rung
