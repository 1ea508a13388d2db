// core/common/sha256.h
//
// SHA-256 digests as lowercase hex, for the provenance a trial records about its data (OpenSSL EVP).
//
// Example:
//   std::string digest = Sha256Hex("abc");  // "ba7816bf..."
//   Sha256Hasher hasher;
//   hasher.Update(first_file_bytes);
//   hasher.Update(second_file_bytes);
//   std::string both = hasher.FinishHex();
//
// Thread safety: Sha256Hasher is a value owned by one thread; the free functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace rung {

// Incremental SHA-256 over bytes fed in pieces.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(const void* data, size_t size);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }

  // The digest of everything fed so far, as 64 lowercase hex characters.
  // REQUIRES: called once; no Update afterwards.
  std::string FinishHex();

 private:
  evp_md_ctx_st* context_;
};

// SHA-256 of `bytes`, 64 lowercase hex characters.
std::string Sha256Hex(std::string_view bytes);

// SHA-256 of a file's bytes, read in chunks. NOT_FOUND if it cannot be opened, DATA_LOSS on a read error.
StatusOr<std::string> Sha256FileHex(const std::string& path);

}  // namespace rung
