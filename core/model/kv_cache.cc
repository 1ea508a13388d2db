#include "core/model/kv_cache.h"

namespace rung {

std::pair<torch::Tensor, torch::Tensor> KvCache::Append(int64_t layer, const torch::Tensor& k, const torch::Tensor& v) {
  TORCH_CHECK(layer >= 0 && k.dim() == 4 && k.sizes() == v.sizes(), "KvCache::Append: k and v must be [B, kv_heads, n, d]");
  if (static_cast<int64_t>(keys.size()) <= layer) {
    keys.resize(layer + 1);
    values.resize(layer + 1);
  }
  torch::Tensor& cached_keys = keys[layer];
  torch::Tensor& cached_values = values[layer];
  TORCH_CHECK(!cached_keys.defined() || (cached_keys.size(2) == positions && cached_keys.size(0) == k.size(0) &&
                                         cached_keys.size(1) == k.size(1) && cached_keys.size(3) == k.size(3)),
              "KvCache::Append: layer ", layer, " holds ", cached_keys.defined() ? cached_keys.sizes() : k.sizes(),
              " of ", positions, " positions; appending ", k.sizes());
  cached_keys = cached_keys.defined() ? torch::cat({cached_keys, k}, 2) : k.contiguous();
  cached_values = cached_values.defined() ? torch::cat({cached_values, v}, 2) : v.contiguous();
  return {cached_keys, cached_values};
}

}  // namespace rung
