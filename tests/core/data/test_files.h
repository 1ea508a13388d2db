// tests/core/data/test_files.h
//
// Helpers for the data tests: a temporary folder removed at the end of a test, file writers, the
// path of the committed sample corpus, and OpenedOrNull for readers' factories.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/common/status.h"

namespace rung::data_test {

// The reader a factory opened, or null with a failed expectation that shows the status.
template <typename Reader>
std::unique_ptr<Reader> OpenedOrNull(StatusOr<std::unique_ptr<Reader>> opened) {
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(*opened) : nullptr;
}

inline std::string SampleCorpusPath() { return std::string(RUNG_SOURCE_DIR) + "/tests/data/sample_corpus"; }

// A fresh folder under the test temp dir, deleted with everything in it on destruction.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = ::testing::TempDir() + "rung_data_test_XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// first, first + 1, ... modulo `modulus`: `count` token ids.
inline std::vector<uint32_t> Ramp(uint32_t first, size_t count, uint32_t modulus) {
  std::vector<uint32_t> ids(count);
  for (size_t i = 0; i < count; ++i) ids[i] = (first + static_cast<uint32_t>(i)) % modulus;
  return ids;
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Writes ids little-endian, token_bytes (2 or 4) bytes each.
inline void WriteTokens(const std::string& path, const std::vector<uint32_t>& ids, int token_bytes) {
  std::string bytes;
  for (uint32_t id : ids) {
    for (int b = 0; b < token_bytes; ++b) bytes.push_back(static_cast<char>((id >> (8 * b)) & 0xFF));
  }
  WriteBytes(path, bytes);
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace rung::data_test
