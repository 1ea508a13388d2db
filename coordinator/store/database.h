// coordinator/store/database.h
//
// A thin RAII layer over the SQLite C API: Database (one connection), Statement (one prepared
// statement) and Transaction (BEGIN ... COMMIT, rolled back unless committed). Errors are Status
// values carrying SQLite's own message and the statement that failed; nothing here throws.
//
// Database::Open sets the connection up for the coordinator's durability contract:
//   journal_mode=WAL      readers (sqlite3 users, the CLI) never block the writer, nor it them
//   synchronous=FULL      a committed transaction survives power loss: a write is acknowledged only
//                         after its commit returned
//   foreign_keys=ON       rows cannot point at sweeps, trials or workers that do not exist
//   busy_timeout          another connection's lock is waited for, not failed on at once
//
// Example:
//   StatusOr<std::unique_ptr<Database>> db = Database::Open("rung.db");
//   if (!db.ok()) return db.status();
//   StatusOr<Transaction> txn = Transaction::Begin(**db, TransactionMode::kImmediate);
//   if (!txn.ok()) return txn.status();
//   StatusOr<Statement> insert = (*db)->Prepare("INSERT INTO tags(sweep_id, key, value) VALUES (?, ?, ?)");
//   if (!insert.ok()) return insert.status();
//   insert->BindAll(sweep_id, "owner", "ada");
//   RUNG_RETURN_IF_ERROR(insert->Run());
//   return txn->Commit();
//
// Codes: contention (SQLITE_BUSY, SQLITE_LOCKED) is UNAVAILABLE; a full disk, a read-only file, a
// missing permission and I/O errors are RESOURCE_EXHAUSTED; a damaged file is DATA_LOSS; a broken
// constraint FAILED_PRECONDITION.
//
// Thread safety: none. A Database and everything prepared on it belong to one thread at a time; the
// Store (store.h) serializes its users with a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rung {

class Database;

// One prepared statement. Bind values (1-based, as in SQL), then Step() through the rows or Run()
// a statement without rows. Bind errors are kept and returned by the next Step()/Run(), so binds can
// be chained without checking each one. A statement from Database::Prepare goes back to its
// database's statement cache when destroyed (reset, bindings cleared), so it must not outlive it.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const std::string& value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& BindNull(int index);
  Statement& Bind(int index, std::nullptr_t) { return BindNull(index); }
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value.has_value() ? Bind(index, *value) : BindNull(index);
  }

  // Binds `values` to parameters 1, 2, ... in order.
  template <typename... Values>
  Statement& BindAll(const Values&... values) {
    int index = 0;
    (Bind(++index, values), ...);
    return *this;
  }

  // Advances to the next row: true when a row is available, false when the statement is done.
  StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows (INSERT, UPDATE, DELETE, DDL).
  Status Run();
  // Makes the statement ready to be bound and run again (bindings cleared).
  void Reset();

  // Columns of the current row, 0-based. REQUIRES: the last Step() returned true.
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  // The same text without a copy; valid until the next Step(), Reset() or the statement's end.
  std::string_view ColumnTextView(int column) const;
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<double> ColumnOptionalDouble(int column) const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* statement, Database* cache, std::string sql)
      : db_(db), statement_(statement), cache_(cache), sql_(std::move(sql)) {}
  void KeepFirstError(int result, const char* what);
  Status ErrorStatus(int result, const char* what) const;
  void Release();  // back to the cache, or finalized

  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  Database* cache_ = nullptr;  // the database whose statement cache takes it back; null: finalize
  std::string sql_;            // its key in that cache
  Status bind_error_;
};

struct DatabaseOptions {
  // How long a statement waits for another connection's lock before failing with UNAVAILABLE.
  int busy_timeout_ms = 5000;
  // Opens an existing file read-only (no pragmas that write); for tools and tests that inspect.
  bool read_only = false;
};

// One SQLite connection to one file.
class Database {
 public:
  // Opens (creating it unless read_only) the database file at `path`. Errors: RESOURCE_EXHAUSTED
  // when the file cannot be opened (see the codes below), FAILED_PRECONDITION when WAL mode cannot be set (WAL needs a local file
  // system with shared memory; never NFS), DATA_LOSS when the file is not a database.
  static StatusOr<std::unique_ptr<Database>> Open(const std::string& path, const DatabaseOptions& options = {});

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more SQL statements that return no rows (scripts, PRAGMAs that set).
  Status Execute(const std::string& sql);
  // Prepares one statement. Prepared statements are cached by their SQL text (up to
  // kCachedSqlTexts texts): preparing the same SQL again reuses an idle one instead of parsing it.
  StatusOr<Statement> Prepare(std::string_view sql);

  // Runs `sql` with `values` bound to its parameters 1, 2, ... (Statement::BindAll) and returns the
  // first column of its first row (a count, an EXISTS probe). NOT_FOUND when it returns no row.
  template <typename... Values>
  StatusOr<int64_t> QueryInt64(std::string_view sql, const Values&... values) {
    RUNG_ASSIGN_OR_RETURN(Statement statement, Prepare(sql));
    if constexpr (sizeof...(values) > 0) statement.BindAll(values...);
    return FirstInt64(statement, sql);
  }

  // Runs `sql` (an INSERT, UPDATE or DELETE) with `values` bound to its parameters 1, 2, ... and
  // returns how many rows it changed.
  template <typename... Values>
  StatusOr<int64_t> Change(std::string_view sql, const Values&... values) {
    RUNG_ASSIGN_OR_RETURN(Statement statement, Prepare(sql));
    if constexpr (sizeof...(values) > 0) statement.BindAll(values...);
    RUNG_RETURN_IF_ERROR(statement.Run());
    return ChangedRows();
  }
  // Change() for a caller that needs no count.
  template <typename... Values>
  Status Run(std::string_view sql, const Values&... values) {
    return Change(sql, values...).status();
  }

  // PRAGMA user_version: the schema version (schema.h).
  StatusOr<int64_t> UserVersion();

  int64_t LastInsertRowId() const;
  // Rows changed by the most recent INSERT, UPDATE or DELETE.
  int64_t ChangedRows() const;
  // Whether a transaction is open (false in autocommit mode, also after SQLite rolled one back
  // on its own, e.g. on SQLITE_FULL).
  bool InTransaction() const;
  const std::string& path() const { return path_; }

 private:
  // QueryInt64's untemplated rest: steps `statement` (`sql` for the message) once.
  static StatusOr<int64_t> FirstInt64(Statement& statement, std::string_view sql);

  friend class Statement;
  static constexpr size_t kCachedSqlTexts = 512;
  static constexpr size_t kIdlePerSqlText = 4;

  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Takes back a statement this database prepared (reset); finalizes it when the cache is full.
  void ReturnToCache(sqlite3_stmt* statement, std::string sql);

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> idle_statements_;  // by SQL text
};

enum class TransactionMode {
  kImmediate,  // BEGIN IMMEDIATE: takes the write lock at once (every write transaction)
  kDeferred,   // BEGIN: a consistent read snapshot
};

// A transaction on one Database: rolled back when destroyed without Commit().
class Transaction {
 public:
  static StatusOr<Transaction> Begin(Database& db, TransactionMode mode);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Commits; with synchronous=FULL the changes are on disk when this returns OK. On error the
  // transaction is rolled back.
  Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;  // null once committed, rolled back or moved from
};

}  // namespace rung
