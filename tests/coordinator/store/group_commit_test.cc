// Group commit (store.h): concurrent Write()s share transactions, yet each caller sees exactly its
// own body's outcome: a body that fails changes nothing and only its caller gets the error, every
// other write of the group is committed, and each StatusOr value reaches its own caller.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

class GroupCommitTest : public store_testing::StoreTest {
 protected:
  void CreateTable() {
    ASSERT_OK(store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.Execute("CREATE TABLE numbers(x INTEGER PRIMARY KEY)"); }));
  }

  StatusOr<int64_t> Count() {
    return store_->Read([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.QueryInt64("SELECT COUNT(*) FROM numbers"); });
  }
};

TEST_F(GroupCommitTest, ConcurrentWritesCommitAndAFailingBodyChangesNothingButItsOwnCall) {
  CreateTable();
  constexpr int kWriters = 32;
  constexpr int kFailing = 7;
  std::vector<StatusOr<int64_t>> results(kWriters, Status::Internal("not run"));
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      results[i] = store_->Write([i](Tables& tables) -> StatusOr<int64_t> {
      Database& db = store_internal::DatabaseOf(tables);
        RUNG_RETURN_IF_ERROR(db.Execute("INSERT INTO numbers(x) VALUES (" + std::to_string(i) + ")"));
        if (i == kFailing) return Status::InvalidArgument("writer " + std::to_string(i) + " refuses");
        return int64_t{i} * 10;
      });
    });
  }
  go.store(true);
  for (std::thread& thread : threads) thread.join();

  for (int i = 0; i < kWriters; ++i) {
    if (i == kFailing) {
      EXPECT_EQ(results[i].status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(results[i].status().message(), "writer 7 refuses");
    } else {
      ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status().ToString();
      EXPECT_EQ(*results[i], int64_t{i} * 10);
    }
  }
  ASSERT_OK_AND_ASSIGN(const int64_t rows, Count());
  EXPECT_EQ(rows, kWriters - 1);
  ASSERT_OK_AND_ASSIGN(const int64_t failing_rows, store_->Read([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables);
    return db.QueryInt64("SELECT COUNT(*) FROM numbers WHERE x = " + std::to_string(kFailing));
  }));
  EXPECT_EQ(failing_rows, 0);
}

TEST_F(GroupCommitTest, AWriteSeesTheWritesCommittedBeforeIt) {
  CreateTable();
  ASSERT_OK(store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.Execute("INSERT INTO numbers(x) VALUES (1)"); }));
  const StatusOr<int64_t> seen =
      store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.QueryInt64("SELECT COUNT(*) FROM numbers"); });
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(*seen, 1);
}

TEST_F(GroupCommitTest, AFailedWriteThatViolatesAConstraintLeavesTheStoreUsable) {
  CreateTable();
  ASSERT_OK(store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.Execute("INSERT INTO numbers(x) VALUES (1)"); }));
  const Status duplicate =
      store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.Execute("INSERT INTO numbers(x) VALUES (1)"); });
  EXPECT_FALSE(duplicate.ok());
  ASSERT_OK(store_->Write([](Tables& tables) {
      Database& db = store_internal::DatabaseOf(tables); return db.Execute("INSERT INTO numbers(x) VALUES (2)"); }));
  ASSERT_OK_AND_ASSIGN(const int64_t rows, Count());
  EXPECT_EQ(rows, 2);
}

}  // namespace
}  // namespace rung
