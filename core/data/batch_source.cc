#include "core/data/batch_source.h"

#include "core/data/builtin_corpus.h"
#include "core/data/byte_corpus.h"
#include "core/data/synthetic_tasks.h"
#include "core/data/token_shards.h"

namespace rung {
namespace {

template <typename Derived>
StatusOr<std::unique_ptr<BatchSource>> Upcast(StatusOr<std::unique_ptr<Derived>> source) {
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Derived> derived, std::move(source));
  return std::unique_ptr<BatchSource>(std::move(derived));
}

}  // namespace

StatusOr<std::unique_ptr<BatchSource>> MakeBatchSource(const DataConfig& config, uint64_t seed) {
  std::vector<ConfigError> errors;
  ValidateDataConfig(config, &errors);
  RUNG_RETURN_IF_ERROR(ConfigErrorsToStatus(errors, "data config"));
  if (config.source == "builtin") return LoadBuiltinCorpus(config, seed);
  if (config.source == "text") return Upcast(ByteCorpus::Load(config, seed));
  if (config.source == "shards") return Upcast(TokenShards::Open(config, seed));
  if (config.synthetic()) return Upcast(SyntheticTask::Create(config, seed));
  return Status::InvalidArgument("data.source '" + config.source +
                                 "' is not one of builtin, text, shards, nrw, niah, position_index");
}

}  // namespace rung
