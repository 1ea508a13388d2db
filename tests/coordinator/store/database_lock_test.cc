// One coordinator per database: DatabaseLock refuses a second holder however the file is named
// (its path, a symbolic link, a hard link), says who holds it, and lets go when destroyed; and
// Store::Open refuses a damaged file with how to recover it.
#include "coordinator/store/database_lock.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/store/store.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using ::testing::HasSubstr;

class DatabaseLockTest : public store_testing::StoreTest {
 protected:
  std::string Path(const std::string& name) const { return (folder_ / name).string(); }
};

TEST_F(DatabaseLockTest, ASecondHolderIsRefusedNamingTheFirstByPathSymlinkAndHardLink) {
  const std::string path = Path("locked.db");
  StatusOr<DatabaseLock> first = DatabaseLock::Acquire(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::filesystem::create_symlink(path, Path("symlink.db"));
  std::filesystem::create_hard_link(path, Path("hardlink.db"));

  for (const std::string& name : {path, Path("symlink.db"), Path("hardlink.db")}) {
    SCOPED_TRACE(name);
    StatusOr<DatabaseLock> second = DatabaseLock::Acquire(name);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(second.status().message(), HasSubstr("is in use by rung-coordinator pid " + std::to_string(getpid())));
    EXPECT_THAT(second.status().message(), HasSubstr("opened as " + path));
  }
}

TEST_F(DatabaseLockTest, TheLockAndItsRecordGoWithTheHolder) {
  const std::string path = Path("released.db");
  std::string record;
  {
    StatusOr<DatabaseLock> first = DatabaseLock::Acquire(path);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    record = first->holder_record_path();
    EXPECT_TRUE(std::filesystem::exists(record));
  }
  EXPECT_FALSE(std::filesystem::exists(record));
  StatusOr<DatabaseLock> again = DatabaseLock::Acquire(path);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(DatabaseLockTest, AStoreOpenOnAHeldDatabaseFailsAndLeavesItAlone) {
  // The fixture's store holds its database; a second Store on the same file is refused.
  StatusOr<std::unique_ptr<Store>> second = Store::Open(DatabasePath(), clock_, Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("one coordinator per database"));
}

TEST_F(DatabaseLockTest, AFileThatIsNotADatabaseIsRefusedWithHowToRecover) {
  const std::string path = Path("garbage.db");
  std::ofstream(path) << std::string(8192, 'x');
  StatusOr<std::unique_ptr<Store>> store = Store::Open(path, clock_, Options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("is damaged"));
  EXPECT_THAT(store.status().message(), HasSubstr(".recover"));
}

TEST_F(DatabaseLockTest, ADatabaseThatFailsItsQuickCheckIsRefusedUnlessTheCheckIsOff) {
  // A database with rows, its first table page after the schema overwritten.
  Close();
  const std::string path = DatabasePath();
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 3 * 4096u);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(2 * 4096);
    const std::string noise(4096, '\x5a');
    file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  StatusOr<std::unique_ptr<Store>> checked = Store::Open(path, clock_, Options());
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(checked.status().message(), HasSubstr("is damaged"));
  EXPECT_THAT(checked.status().message(), HasSubstr("--check-at-start none"));

  StoreOptions unchecked = Options();
  unchecked.start_check = StoreOptions::StartCheck::kNone;
  StatusOr<std::unique_ptr<Store>> opened = Store::Open(path, clock_, unchecked);
  if (!opened.ok()) {  // with the check off the damage is found later, when a statement meets it
    EXPECT_THAT(opened.status().message(), ::testing::Not(HasSubstr("quick_check")));
  }
}

}  // namespace
}  // namespace rung
