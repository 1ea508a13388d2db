// coordinator/store/schema.h
//
// The coordinator database's schema and its forward migrations. The schema version lives in
// PRAGMA user_version: 0 is an empty file, N means migrations 1..N have been applied. Each migration
// is one SQL script, applied together with its user_version bump in one IMMEDIATE transaction, so
// a crash leaves the database at the previous version or the next one, never between.
//
// Changing the schema: append a migration (never edit one that shipped), bump nothing else, and
// describe the change in SCHEMA.md. A database newer than this build is refused (FAILED_PRECONDITION)
// rather than written by code that does not know its tables.
//
// Thread safety: MigrateSchema uses the Database it is given; see database.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace rung {

struct SchemaMigration {
  int64_t version;          // the user_version after this migration: 1, 2, ...
  std::string description;  // one line, for logs and SCHEMA.md
  std::string sql;          // the script
  // A step SQL cannot state (one that reads the database first), run after `sql` in the same
  // transaction; may be empty.
  std::function<Status(Database&)> code;
};

// This build's migrations, in order (versions 1..N without gaps).
const std::vector<SchemaMigration>& SchemaMigrations();

// The version this build reads and writes: SchemaMigrations().back().version.
int64_t LatestSchemaVersion();

// Brings `db` to the latest version. Errors: FAILED_PRECONDITION when the database is newer than
// `migrations` know; the SQL error of a migration that fails (that migration is rolled back).
Status MigrateSchema(Database& db);
// The same with an explicit migration list (tests exercise later versions with it).
// REQUIRES: versions 1..N in order.
Status MigrateSchema(Database& db, const std::vector<SchemaMigration>& migrations);

}  // namespace rung
