#include "core/common/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace rung {

Sha256Hasher::Sha256Hasher() : context_(EVP_MD_CTX_new()) {
  // Allocation or initialisation failures leave a context that FinishHex() reports as "".
  if (context_ != nullptr && EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context_);
    context_ = nullptr;
  }
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(context_); }

void Sha256Hasher::Update(const void* data, size_t size) {
  if (context_ != nullptr && size > 0) EVP_DigestUpdate(context_, data, size);
}

std::string Sha256Hasher::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (context_ == nullptr || EVP_DigestFinal_ex(context_, digest, &length) != 1) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xF]);
  }
  return hex;
}

std::string Sha256Hex(std::string_view bytes) {
  Sha256Hasher hasher;
  hasher.Update(bytes);
  return hasher.FinishHex();
}

StatusOr<std::string> Sha256FileHex(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Status::NotFound("cannot open " + path);
  Sha256Hasher hasher;
  std::vector<char> buffer(1 << 20);
  size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) hasher.Update(buffer.data(), got);
  if (std::ferror(file.get())) return Status::DataLoss("read error in " + path);
  return hasher.FinishHex();
}

}  // namespace rung
