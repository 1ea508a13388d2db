// core/common/fresh_token.h
//
// A fresh secret: `bytes` bytes from OpenSSL's random generator as lower-case hex (2 x bytes
// characters, all in the bearer-token alphabet). The coordinator's token files and the dashboard's
// login token are made here.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::string token, FreshHexToken());   // 64 hex characters
//
// Thread safety: reentrant.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

inline constexpr int kFreshTokenBytes = 32;

// Errors: INTERNAL when OpenSSL has no randomness; INVALID_ARGUMENT for bytes < 1.
StatusOr<std::string> FreshHexToken(int bytes = kFreshTokenBytes);

}  // namespace rung
