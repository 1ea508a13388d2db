// tests/core/model/central_differences.h
//
// The gradient check the fused kernels' tests share: autograd's gradient of a scalar loss against
// central differences, element by element.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

namespace rung {

// For every `stride`-th element of `param` (a leaf whose .grad() a backward of loss() has filled):
// (loss(p + eps) - loss(p - eps)) / 2 eps, with the element moved in place and restored, is within
// `tolerance` of the gradient. Works in fp32 and fp64 (the differences are taken in double).
inline void ExpectGradientMatchesCentralDifferences(torch::Tensor& param, const std::function<torch::Tensor()>& loss,
                                                    double eps, double tolerance, int64_t stride = 1) {
  ASSERT_TRUE(param.grad().defined());
  auto flat = param.view({-1});
  auto grad = param.grad().view({-1});
  for (int64_t index = 0; index < flat.numel(); index += stride) {
    double plus, minus;
    {
      torch::NoGradGuard no_grad;
      const double original = flat[index].item<double>();
      flat[index] = original + eps;
      plus = loss().item<double>();
      flat[index] = original - eps;
      minus = loss().item<double>();
      flat[index] = original;
    }
    EXPECT_NEAR(grad[index].item<double>(), (plus - minus) / (2 * eps), tolerance) << "element " << index;
  }
}

}  // namespace rung
