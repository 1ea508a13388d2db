#include "core/common/fresh_token.h"

#include <vector>

#include <openssl/rand.h>

namespace rung {

StatusOr<std::string> FreshHexToken(int bytes) {
  if (bytes < 1) return Status::InvalidArgument("a fresh token needs at least one byte");
  std::vector<unsigned char> random(static_cast<size_t>(bytes));
  if (RAND_bytes(random.data(), bytes) != 1) return Status::Internal("OpenSSL has no randomness for a token");
  constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  token.reserve(2 * random.size());
  for (unsigned char byte : random) {
    token += kHex[byte >> 4];
    token += kHex[byte & 0xf];
  }
  return token;
}

}  // namespace rung
