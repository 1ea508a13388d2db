// The coordinator `rung run` and `rung serve` start on a run directory: how long they wait for it.
#include "coordinator/cli/local_coordinator.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

TEST(LocalCoordinatorTest, WaitsLongerForALargerDatabaseSinceItReadsItAllBeforeServing) {
  EXPECT_EQ(CoordinatorStartBudget(0).count(), 20);
  EXPECT_EQ(CoordinatorStartBudget(4096).count(), 80);
  EXPECT_EQ(CoordinatorStartBudget(std::uintmax_t{1} << 30).count(), 80);
  EXPECT_EQ(CoordinatorStartBudget(std::uintmax_t{1600} << 20).count(), 140) << "the 1.6 GB benchmark database";
  EXPECT_LT(CoordinatorStartBudget(std::uintmax_t{2} << 30), CoordinatorStartBudget(std::uintmax_t{3} << 30));
}

TEST(LocalCoordinatorTest, ServesAFreshRunDirectoryAndItsDatabaseThenHasASize) {
  const std::string dir = ::testing::TempDir() + "local_coordinator_" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const RunDirectory run{dir};
  EXPECT_EQ(DatabaseBytes(run), 0u) << "no database yet";
  StatusOr<LocalCoordinator> coordinator = StartLocalCoordinator(run, "127.0.0.1:0", 30);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().ToString();
  EXPECT_EQ(coordinator->address.rfind("127.0.0.1:", 0), 0u) << coordinator->address;
  EXPECT_GT(DatabaseBytes(run), 0u);
  coordinator->process.reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::cli
