#include "core/train/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace rung {

bool UsesAutocast(const TrialConfig& trial) { return trial.train.precision == "bf16" && trial.train.device == "cuda"; }

AutocastScope::AutocastScope(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_enabled(at::kCUDA, true);
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
#else
  at::autocast::set_enabled(true);
  at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
#endif
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
  at::autocast::set_enabled(false);
#endif
}

}  // namespace rung
