// The learned absolute position embedding's model part: the transformer's "position_embedding"
// table [n_train, d_model], drawn N(0, 0.02^2) after the backbone, and its rows added to the token
// embedding (absolute_position.h; core/config/positional/absolute.cc).
#include "core/model/absolute_position.h"
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class AbsolutePositionModel final : public PositionalVariantModel {
 public:
  AbsolutePositionModel(const ModelConfig& config, torch::nn::Module&, const RotaryBasis&) : config_(config) {}
  torch::Tensor MakeInputTable(torch::nn::Module& transformer) const override {
    return transformer.register_parameter(
        "position_embedding", torch::randn({config_.seq_len, config_.d_model}) * kAbsolutePositionInitStd);
  }
  torch::Tensor InputRows(const torch::Tensor& table, int64_t time) const override {
    return AbsolutePositionRows(table, time, config_.position.absolute.beyond);
  }

 private:
  ModelConfig config_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(absolute, rung::AbsolutePositionModel)
