#include "coordinator/store/database.h"

#include <sqlite3.h>

#include <filesystem>
#include <utility>

#include "core/common/write_error.h"

namespace rung {
namespace {

// SQLite result codes mapped to the codes callers act on. Contention is UNAVAILABLE (retry soon);
// a full disk, a read-only file and I/O errors are RESOURCE_EXHAUSTED: trouble on the server's side
// that an operator has to clear, which a worker waits out (it retries RESOURCE_EXHAUSTED and keeps
// training) and the CLI reports as a failure (exit 1), not as a coordinator it cannot reach.
StatusCode CodeForSqliteResult(int result) {
  switch (result & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return StatusCode::kResourceExhausted;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return StatusCode::kDataLoss;
    case SQLITE_CONSTRAINT:
      return StatusCode::kFailedPrecondition;
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

// "sqlite: <what>: <SQLite's message> (<extended code name>)", and the statement when there is one.
// A full disk begins "no space left on device at <the database's folder>" (core/common/write_error.h),
// the words every part of rung uses for it, so that callers and users can tell it from other errors.
Status SqliteError(sqlite3* db, int result, const std::string& what, std::string_view sql = {}) {
  std::string message;
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  if ((result & 0xff) == SQLITE_FULL && file != nullptr && *file != '\0') {
    message = std::string(kNoSpaceMessage) + std::filesystem::path(file).parent_path().string() + " (the database " +
              file + " cannot grow; reads are still served): ";
  }
  message += "sqlite: " + what + ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(result);
  message += std::string(" (") + sqlite3_errstr(result) + ")";
  if (!sql.empty()) message += " in: " + std::string(sql.substr(0, 300));
  return Status(CodeForSqliteResult(result), std::move(message));
}

}  // namespace

// ---------------------------------------------------------------------------------------- Statement

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      statement_(std::exchange(other.statement_, nullptr)),
      cache_(std::exchange(other.cache_, nullptr)),
      sql_(std::move(other.sql_)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    db_ = std::exchange(other.db_, nullptr);
    statement_ = std::exchange(other.statement_, nullptr);
    cache_ = std::exchange(other.cache_, nullptr);
    sql_ = std::move(other.sql_);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (statement_ == nullptr) return;
  if (cache_ != nullptr) {
    cache_->ReturnToCache(statement_, std::move(sql_));
  } else {
    sqlite3_finalize(statement_);
  }
  statement_ = nullptr;
  cache_ = nullptr;
}

Status Statement::ErrorStatus(int result, const char* what) const {
  return SqliteError(db_, result, what, sqlite3_sql(statement_));
}

void Statement::KeepFirstError(int result, const char* what) {
  if (result != SQLITE_OK && bind_error_.ok()) bind_error_ = ErrorStatus(result, what);
}

Statement& Statement::Bind(int index, int64_t value) {
  KeepFirstError(sqlite3_bind_int64(statement_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  KeepFirstError(sqlite3_bind_double(statement_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  KeepFirstError(sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
                 "bind");
  return *this;
}

Statement& Statement::BindNull(int index) {
  KeepFirstError(sqlite3_bind_null(statement_, index), "bind");
  return *this;
}

StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  const int result = sqlite3_step(statement_);
  if (result == SQLITE_ROW) return true;
  if (result == SQLITE_DONE) return false;
  Status error = ErrorStatus(result, "step");
  sqlite3_reset(statement_);
  return error;
}

Status Statement::Run() {
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_error_ = Status::Ok();
}

bool Statement::ColumnIsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::ColumnText(int column) const { return std::string(ColumnTextView(column)); }

std::string_view Statement::ColumnTextView(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(text),
                          static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (ColumnIsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}

std::optional<double> Statement::ColumnOptionalDouble(int column) const {
  if (ColumnIsNull(column)) return std::nullopt;
  return ColumnDouble(column);
}

// ----------------------------------------------------------------------------------------- Database

StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path, const DatabaseOptions& options) {
  sqlite3* handle = nullptr;
  // The connection is serialized by its owner (the Store's mutex), so SQLite's own mutex is not needed.
  const int flags = (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  const int result = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (result != SQLITE_OK) {
    Status error = SqliteError(handle, result, "open " + path);
    sqlite3_close(handle);
    return error;
  }
  std::unique_ptr<Database> db(new Database(handle, path));
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, options.busy_timeout_ms);
  if (options.read_only) return db;

  // journal_mode answers with the mode it ended up in; anything but "wal" means WAL is unavailable.
  std::string mode;
  {
    RUNG_ASSIGN_OR_RETURN(Statement journal, db->Prepare("PRAGMA journal_mode=WAL"));
    RUNG_ASSIGN_OR_RETURN(bool row, journal.Step());
    if (row) mode = journal.ColumnText(0);
  }
  if (mode != "wal") {
    return Status::FailedPrecondition("sqlite: " + path + ": cannot use WAL mode (journal_mode is '" + mode +
                                      "'); the database must live on a local file system");
  }
  RUNG_RETURN_IF_ERROR(db->Execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"));
  return db;
}

Database::~Database() {
  for (auto& [sql, statements] : idle_statements_) {
    for (sqlite3_stmt* statement : statements) sqlite3_finalize(statement);
  }
  sqlite3_close_v2(db_);
}

void Database::ReturnToCache(sqlite3_stmt* statement, std::string sql) {
  // Reset at once: a SELECT left mid-way would keep its read transaction open.
  sqlite3_reset(statement);
  sqlite3_clear_bindings(statement);
  auto idle = idle_statements_.find(sql);
  if (idle == idle_statements_.end() && idle_statements_.size() < kCachedSqlTexts) {
    idle = idle_statements_.emplace(std::move(sql), std::vector<sqlite3_stmt*>()).first;
  }
  if (idle == idle_statements_.end() || idle->second.size() >= kIdlePerSqlText) {
    sqlite3_finalize(statement);
    return;
  }
  idle->second.push_back(statement);
}

Status Database::Execute(const std::string& sql) {
  char* message = nullptr;
  const int result = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // sqlite3_errmsg still holds the same text
  if (result != SQLITE_OK) return SqliteError(db_, result, "execute", sql);
  return Status::Ok();
}

StatusOr<Statement> Database::Prepare(std::string_view sql) {
  std::string key(sql);
  if (auto idle = idle_statements_.find(key); idle != idle_statements_.end() && !idle->second.empty()) {
    sqlite3_stmt* statement = idle->second.back();
    idle->second.pop_back();
    return Statement(db_, statement, this, std::move(key));
  }
  sqlite3_stmt* statement = nullptr;
  const int result = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                        &statement, nullptr);
  if (result != SQLITE_OK) {
    sqlite3_finalize(statement);
    return SqliteError(db_, result, "prepare", sql);
  }
  return Statement(db_, statement, this, std::move(key));
}

StatusOr<int64_t> Database::FirstInt64(Statement& statement, std::string_view sql) {
  RUNG_ASSIGN_OR_RETURN(bool row, statement.Step());
  if (!row) return Status::NotFound("sqlite: no row from: " + std::string(sql));
  return statement.ColumnInt64(0);
}

StatusOr<int64_t> Database::UserVersion() { return QueryInt64("PRAGMA user_version"); }

int64_t Database::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Database::ChangedRows() const { return sqlite3_changes64(db_); }

bool Database::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

// -------------------------------------------------------------------------------------- Transaction

StatusOr<Transaction> Transaction::Begin(Database& db, TransactionMode mode) {
  RUNG_RETURN_IF_ERROR(db.Execute(mode == TransactionMode::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // Best effort: a failed ROLLBACK leaves nothing to undo (SQLite ended the transaction already).
  if (db_ != nullptr) db_->Execute("ROLLBACK").IgnoreError();
}

Status Transaction::Commit() {
  Database* db = std::exchange(db_, nullptr);
  if (db == nullptr) return Status::FailedPrecondition("sqlite: commit of a transaction that already ended");
  Status status = db->Execute("COMMIT");
  if (!status.ok()) db->Execute("ROLLBACK").IgnoreError();  // the commit's error is the one to report
  return status;
}

}  // namespace rung
