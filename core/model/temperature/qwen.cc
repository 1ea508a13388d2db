// Qwen's form's model part: max(1, ln n / ln n_ref)^xi, nothing learned (core/config/temperature/qwen.cc).
#include <cmath>

#include "core/model/inverse_temperature_form_model.h"

namespace rung {
namespace {

class QwenModel final : public InverseTemperatureFormModel {
 public:
  QwenModel(const ModelConfig& config, torch::nn::Module&) : config_(config) {}
  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys) override {
    const InverseTemperatureConfig& t = config_.inverse_temperature;
    const torch::Tensor n = keys.to(torch::kFloat);
    const torch::Tensor base = torch::pow((n.log() / std::log(t.n_ref)).clamp_min(1.0), t.xi);
    std::vector<int64_t> shape = n.sizes().vec();
    shape.push_back(config_.heads);
    const torch::Tensor shared = base.unsqueeze(-1).expand(shape).contiguous();
    return std::vector<torch::Tensor>(config_.layers, shared);
  }

 private:
  ModelConfig config_;
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_MODEL(qwen, rung::QwenModel)
