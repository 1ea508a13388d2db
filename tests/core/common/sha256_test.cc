#include "core/common/sha256.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace rung {
namespace {

TEST(Sha256Test, MatchesKnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, StreamingEqualsOneShot) {
  Sha256Hasher hasher;
  hasher.Update("ab");
  hasher.Update("");
  hasher.Update("c");
  EXPECT_EQ(hasher.FinishHex(), Sha256Hex("abc"));
}

TEST(Sha256Test, HashesAFileAndReportsAMissingOne) {
  std::string pattern = ::testing::TempDir() + "rung_sha256_test_XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path folder = pattern;
  std::ofstream(folder / "f", std::ios::binary) << "abc";
  StatusOr<std::string> digest = Sha256FileHex((folder / "f").string());
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, Sha256Hex("abc"));
  EXPECT_EQ(Sha256FileHex((folder / "missing").string()).status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace rung
