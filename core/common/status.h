// core/common/status.h
//
// Status and StatusOr<T>: errors as values across module boundaries (Abseil style).
// A Status is either OK or carries a code and a message a person can act on. The codes are the
// canonical set gRPC and Abseil share, with the same numbers, so a Status crosses an RPC and comes
// back with its code (proto/grpc_status.h). What each code means here:
//   CANCELLED           the caller stopped the operation (an interrupted call, a reader that left)
//   INVALID_ARGUMENT    the input is wrong whatever the state (a bad spec, flag or request field)
//   DEADLINE_EXCEEDED   a deadline passed before the operation finished
//   NOT_FOUND           a named thing (sweep, trial, file) does not exist
//   ALREADY_EXISTS      what the caller would create exists already
//   PERMISSION_DENIED   the caller is known but may not do this
//   RESOURCE_EXHAUSTED  a limit or quota ran out (sizes, disk, slots)
//   FAILED_PRECONDITION the system is not in the state the operation needs (a fenced attempt)
//   ABORTED             the operation failed and the caller should not simply retry it the same
//                       way (a training run whose loss became non-finite)
//   OUT_OF_RANGE        past a valid range (a batch sequence that skips ahead)
//   UNIMPLEMENTED       not supported by this build or peer
//   INTERNAL            an invariant broke (a bug)
//   UNAVAILABLE         transient: retrying later may succeed
//   DATA_LOSS           stored data is corrupt or lost
//   UNAUTHENTICATED     the caller's credentials are missing or wrong
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(ModelConfig config, ParseModelConfig(json));
//   RUNG_RETURN_IF_ERROR(Check(config));
//
// Both are [[nodiscard]]: dropping one is a compiler warning. Where an error really does not
// matter, say so with IgnoreError() and a comment why.
//
// Thread safety: values, no shared state.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace rung {

enum class StatusCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT", ...; "UNKNOWN" for a number outside the set.
const char* StatusCodeName(StatusCode code);
// The code with this canonical number; kUnknown for any other number.
StatusCode StatusCodeFromInt(int code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status Unknown(std::string msg) { return {StatusCode::kUnknown, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status DeadlineExceeded(std::string msg) { return {StatusCode::kDeadlineExceeded, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {StatusCode::kAlreadyExists, std::move(msg)}; }
  static Status PermissionDenied(std::string msg) { return {StatusCode::kPermissionDenied, std::move(msg)}; }
  static Status ResourceExhausted(std::string msg) { return {StatusCode::kResourceExhausted, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) {
    return {StatusCode::kFailedPrecondition, std::move(msg)};
  }
  static Status Aborted(std::string msg) { return {StatusCode::kAborted, std::move(msg)}; }
  static Status OutOfRange(std::string msg) { return {StatusCode::kOutOfRange, std::move(msg)}; }
  static Status Unimplemented(std::string msg) { return {StatusCode::kUnimplemented, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status DataLoss(std::string msg) { return {StatusCode::kDataLoss, std::move(msg)}; }
  static Status Unauthenticated(std::string msg) { return {StatusCode::kUnauthenticated, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // The same code with `context + ": "` before the message (OK stays OK).
  Status WithContext(const std::string& context) const;

  // Says, at the call site, that this error is dropped on purpose (best-effort cleanup whose
  // failure changes nothing the caller could act on).
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }
  friend bool operator!=(const Status& a, const Status& b) { return !(a == b); }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// REQUIRES: value() only when ok().
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr built from an OK status without a value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }
  const T& value() const& { assert(ok()); return *value_; }
  T& value() & { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  void IgnoreError() const {}

 private:
  Status status_;
  std::optional<T> value_;
};

namespace status_internal {
inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
const Status& StatusOf(const StatusOr<T>& result) {
  return result.status();
}
}  // namespace status_internal

}  // namespace rung

// Returns the Status of `expr` (a Status or a StatusOr) from the enclosing function when not OK.
#define RUNG_RETURN_IF_ERROR(expr)                                                      \
  do {                                                                                  \
    const auto& rung_status_tmp_ = (expr);                                              \
    if (!::rung::status_internal::StatusOf(rung_status_tmp_).ok())                      \
      return ::rung::status_internal::StatusOf(rung_status_tmp_);                       \
  } while (0)

// RUNG_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (a StatusOr<T>); returns its Status from the
// enclosing function when not OK, else moves its value into `lhs` (a declaration, "T name", or an
// existing variable). `expr` may contain commas; `lhs` may not (use auto, or an alias).
#define RUNG_STATUS_CONCAT_INNER_(a, b) a##b
#define RUNG_STATUS_CONCAT_(a, b) RUNG_STATUS_CONCAT_INNER_(a, b)
#define RUNG_ASSIGN_OR_RETURN(lhs, ...) \
  RUNG_ASSIGN_OR_RETURN_IMPL_(RUNG_STATUS_CONCAT_(rung_statusor_, __LINE__), lhs, (__VA_ARGS__))
#define RUNG_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = expr;                                  \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()
