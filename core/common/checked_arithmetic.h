// core/common/checked_arithmetic.h
//
// int64 arithmetic that says when it overflows instead of wrapping (signed overflow is undefined
// behaviour in C++): what config validation and the parameter/FLOP arithmetic use on values a user
// wrote, so that a huge `train.steps` is an error and never a negative token count.
//
// Example:
//   std::optional<int64_t> tokens = CheckedProduct({steps, batch_size, grad_accum, seq_len});
//   if (!tokens) errors->push_back({"train.steps", "steps x tokens per step overflows int64"});
//
//   CheckedInt64 attention = CheckedInt64(layers) * d_model * (q_width + 2 * kv_width);  // formulas
//   if (!attention.value()) ...                                                        // as written
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace rung {

// a * b, or nullopt when it does not fit int64.
[[nodiscard]] inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// a + b, or nullopt when it does not fit int64.
[[nodiscard]] inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// The product of `factors` (1 for none), or nullopt when it, or a partial product, does not fit.
[[nodiscard]] inline std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) return std::nullopt;
  }
  return product;
}

// The sum of `terms` (0 for none), or nullopt when it, or a partial sum, does not fit.
[[nodiscard]] inline std::optional<int64_t> CheckedSum(std::initializer_list<int64_t> terms) {
  int64_t sum = 0;
  for (int64_t term : terms) {
    if (__builtin_add_overflow(sum, term, &sum)) return std::nullopt;
  }
  return sum;
}

// An int64 whose + and * become "overflowed", and stay so, instead of wrapping: for formulas of
// several steps written as formulas.
class CheckedInt64 {
 public:
  CheckedInt64(int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor): formulas

  // The value, or nullopt when a step overflowed.
  std::optional<int64_t> value() const { return value_; }

  friend CheckedInt64 operator*(CheckedInt64 a, CheckedInt64 b) {
    return a.value_ && b.value_ ? CheckedInt64(CheckedMul(*a.value_, *b.value_)) : CheckedInt64(std::nullopt);
  }
  friend CheckedInt64 operator+(CheckedInt64 a, CheckedInt64 b) {
    return a.value_ && b.value_ ? CheckedInt64(CheckedAdd(*a.value_, *b.value_)) : CheckedInt64(std::nullopt);
  }

 private:
  explicit CheckedInt64(std::optional<int64_t> value) : value_(value) {}
  std::optional<int64_t> value_;
};

}  // namespace rung
