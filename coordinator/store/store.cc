#include "coordinator/store/store.h"

#include "coordinator/store/schema.h"

namespace rung {

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock& clock, StoreOptions options) {
  DatabaseOptions database_options;
  database_options.busy_timeout_ms = options.busy_timeout_ms;
  StatusOr<std::unique_ptr<Database>> db = Database::Open(path, database_options);
  if (!db.ok()) return db.status();
  RUNG_RETURN_IF_ERROR(MigrateSchema(**db));
  return std::unique_ptr<Store>(new Store(std::move(db).value(), clock, std::move(options)));
}

}  // namespace rung
