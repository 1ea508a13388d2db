// Database's statement cache (database.h): preparing the same SQL again reuses a statement that was
// reset and unbound, never one still in use, and a statement left in the middle of its rows starts
// from the first row with its new bindings.
#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

class StatementCacheTest : public store_testing::StoreTest {};

TEST_F(StatementCacheTest, AReusedStatementStartsAgainWithItsNewBindings) {
  ASSERT_OK(store_->Write([](Tables& tables) -> Status {
      Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(db.Execute("CREATE TABLE numbers(x INTEGER PRIMARY KEY)"));
    return db.Execute("INSERT INTO numbers(x) VALUES (1), (2), (3), (4)");
  }));
  const std::string sql = "SELECT x FROM numbers WHERE x >= ? ORDER BY x";
  ASSERT_OK(store_->Read([&](Tables& tables) -> Status {
      Database& db = store_internal::DatabaseOf(tables);
    {
      StatusOr<Statement> first = db.Prepare(sql);
      RUNG_RETURN_IF_ERROR(first);
      first->Bind(1, 2);
      StatusOr<bool> row = first->Step();
      EXPECT_TRUE(row.ok() && *row);
      EXPECT_EQ(first->ColumnInt64(0), 2);
      // Left mid-way: two more rows were never read.
    }
    StatusOr<Statement> again = db.Prepare(sql);
    RUNG_RETURN_IF_ERROR(again);
    StatusOr<Statement> concurrent = db.Prepare(sql);  // the cached one is taken: a fresh one
    RUNG_RETURN_IF_ERROR(concurrent);
    again->Bind(1, 3);
    concurrent->Bind(1, 1);
    std::vector<int64_t> seen, seen_concurrently;
    for (StatusOr<bool> row = again->Step(); row.ok() && *row; row = again->Step()) seen.push_back(again->ColumnInt64(0));
    for (StatusOr<bool> row = concurrent->Step(); row.ok() && *row; row = concurrent->Step()) {
      seen_concurrently.push_back(concurrent->ColumnInt64(0));
    }
    EXPECT_EQ(seen, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(seen_concurrently, (std::vector<int64_t>{1, 2, 3, 4}));
    return Status::Ok();
  }));
}

TEST_F(StatementCacheTest, AStatementWhoseParameterWasNotBoundAgainSeesNull) {
  ASSERT_OK(store_->Read([](Tables& tables) -> Status {
      Database& db = store_internal::DatabaseOf(tables);
    {
      StatusOr<Statement> bound = db.Prepare("SELECT ? IS NULL");
      RUNG_RETURN_IF_ERROR(bound);
      bound->Bind(1, 7);
      StatusOr<bool> row = bound->Step();
      EXPECT_TRUE(row.ok() && *row);
      EXPECT_EQ(bound->ColumnInt64(0), 0);
    }
    StatusOr<Statement> unbound = db.Prepare("SELECT ? IS NULL");
    RUNG_RETURN_IF_ERROR(unbound);
    StatusOr<bool> row = unbound->Step();
    EXPECT_TRUE(row.ok() && *row);
    EXPECT_EQ(unbound->ColumnInt64(0), 1);  // the old binding was cleared
    return Status::Ok();
  }));
}

}  // namespace
}  // namespace rung
