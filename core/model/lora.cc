#include "core/model/lora.h"

#include <cmath>

namespace rung {

LoraSlice LoraTargetSlice(const ModelConfig& model, LoraTarget target) {
  const int64_t attention = model.heads * model.head_dim, kv = model.kv_heads * model.head_dim;
  const bool swiglu = model.mlp == "swiglu";
  switch (target) {
    case LoraTarget::kQ: return {"qkv", 0, attention, model.d_model};
    case LoraTarget::kK: return {"qkv", attention, kv, model.d_model};
    case LoraTarget::kV: return {"qkv", attention + kv, kv, model.d_model};
    case LoraTarget::kO: return {"attn_out", 0, model.d_model, attention};
    // A SwiGLU's fused projection is [gate; up] (the transformer's chunk(2) order).
    case LoraTarget::kGate: return {"mlp_up", 0, model.mlp_hidden, model.d_model};
    case LoraTarget::kUp: return {"mlp_up", swiglu ? model.mlp_hidden : 0, model.mlp_hidden, model.d_model};
    case LoraTarget::kDown: return {"mlp_down", 0, model.d_model, model.mlp_hidden};
  }
  return {};
}

LoraAdaptersImpl::LoraAdaptersImpl(const ModelConfig& model, const LoraConfig& lora, bool draw)
    : model_(model), lora_(lora) {
  const std::vector<std::string>& names = LoraTargetNames();
  for (int target = 0; target < kLoraTargets; ++target) {
    for (const std::string& chosen : lora.targets) adapted_[target] |= chosen == names[target];
  }
  a_.assign(model.layers, std::vector<torch::Tensor>(kLoraTargets));
  b_.assign(model.layers, std::vector<torch::Tensor>(kLoraTargets));
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    for (int target = 0; target < kLoraTargets; ++target) {
      if (!adapted_[target]) continue;
      const LoraSlice slice = LoraTargetSlice(model, static_cast<LoraTarget>(target));
      const std::string prefix = "blocks_" + std::to_string(layer) + "_" + names[target];
      const double bound = 1.0 / std::sqrt(static_cast<double>(slice.in));
      torch::Tensor a = draw ? torch::empty({lora.rank, slice.in}).uniform_(-bound, bound)
                             : torch::empty({lora.rank, slice.in});
      a_[layer][target] = register_parameter(prefix + "_a", a);
      b_[layer][target] = register_parameter(prefix + "_b", torch::zeros({slice.rows, lora.rank}));
    }
  }
}

torch::Tensor LoraAdaptersImpl::Delta(int64_t layer, LoraTarget target, const torch::Tensor& x) const {
  const torch::Tensor& a = a_[layer][static_cast<int>(target)];
  const torch::Tensor& b = b_[layer][static_cast<int>(target)];
  auto in = lora_.dropout > 0.0 ? torch::dropout(x, lora_.dropout, is_training()) : x;
  auto as = [&](const torch::Tensor& weight) { return weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type()); };
  // The scaling on the rank-wide intermediate, the cheapest place for it.
  return torch::linear(torch::linear(in, as(a)) * lora_.scaling(), as(b));
}

void LoraAdaptersImpl::AddDeltas(int64_t layer, std::initializer_list<LoraTarget> targets, const torch::Tensor& x,
                                 torch::Tensor& out) const {
  for (LoraTarget target : targets) {
    if (!adapts(target)) continue;
    const LoraSlice slice = LoraTargetSlice(model_, target);
    out.narrow(-1, slice.row, slice.rows).add_(Delta(layer, target, x));
  }
}

void LoraAdaptersImpl::MergeInto(torch::nn::Module& model) const {
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters(true);
  const std::vector<std::string>& names = LoraTargetNames();
  for (int64_t layer = 0; layer < model_.layers; ++layer) {
    for (int target = 0; target < kLoraTargets; ++target) {
      if (!adapted_[target]) continue;
      const LoraSlice slice = LoraTargetSlice(model_, static_cast<LoraTarget>(target));
      torch::Tensor* weight = params.find("blocks_" + std::to_string(layer) + "_" + slice.weight);
      TORCH_CHECK(weight != nullptr, "LoRA merge: no weight blocks_", layer, "_", slice.weight, " for ", names[target]);
      torch::Tensor rows = weight->narrow(0, slice.row, slice.rows);
      const torch::Tensor update = torch::mm(b_[layer][target].to(torch::kFloat), a_[layer][target].to(torch::kFloat)) *
                                   lora_.scaling();
      rows.copy_(rows.to(torch::kFloat) + update.to(rows.device()));
    }
  }
}

}  // namespace rung
