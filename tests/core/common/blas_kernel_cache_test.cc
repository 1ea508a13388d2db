// The BLAS kernel verdict cache (core/common/blas_kernel_cache.h): a real file in a fresh folder.
#include "core/common/blas_kernel_cache.h"

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/file_bytes.h"
#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using data_test::TempFolder;
using data_test::WriteBytes;

KernelVerdict Verdict(std::string kernel, KernelVerdict::Outcome outcome, std::string ran, std::string detail) {
  KernelVerdict verdict;
  verdict.kernel = std::move(kernel);
  verdict.outcome = outcome;
  verdict.ran = std::move(ran);
  verdict.detail = std::move(detail);
  return verdict;
}

TEST(BlasKernelCacheTest, VerdictsComeBackUnderTheirKey) {
  TempFolder folder;
  const std::string path = folder / "sub/blas-kernel.json";
  ASSERT_TRUE(WriteKernelVerdicts(path, "cpu=a;openblas=x", "2026-12-03 10:00:00Z",
                                  {Verdict("SapphireRapids", KernelVerdict::Outcome::kUnavailable, "Cooperlake", "no such"),
                                   Verdict("Cooperlake", KernelVerdict::Outcome::kPassed, "Cooperlake", "matches")})
                  .ok());
  const std::vector<KernelVerdict> verdicts = ReadKernelVerdicts(path, "cpu=a;openblas=x");
  ASSERT_THAT(verdicts, SizeIs(2));
  EXPECT_EQ(verdicts[0].kernel, "SapphireRapids");
  EXPECT_EQ(verdicts[0].outcome, KernelVerdict::Outcome::kUnavailable);
  EXPECT_EQ(verdicts[0].ran, "Cooperlake");
  EXPECT_EQ(verdicts[1].outcome, KernelVerdict::Outcome::kPassed);
  EXPECT_EQ(verdicts[1].detail, "matches");
  EXPECT_THAT(ReadKernelVerdicts(path, "cpu=b;openblas=x"), IsEmpty());
}

TEST(BlasKernelCacheTest, WritingOneKeyKeepsTheOthersAndReplacesItsOwn) {
  TempFolder folder;
  const std::string path = folder / "blas-kernel.json";
  ASSERT_TRUE(WriteKernelVerdicts(path, "one", "t1", {Verdict("SkylakeX", KernelVerdict::Outcome::kPassed, "SkylakeX", "")}).ok());
  ASSERT_TRUE(WriteKernelVerdicts(path, "two", "t2", {Verdict("Haswell", KernelVerdict::Outcome::kCrashed, "", "signal")}).ok());
  ASSERT_TRUE(WriteKernelVerdicts(path, "one", "t3", {Verdict("SkylakeX", KernelVerdict::Outcome::kWrong, "SkylakeX", "bad")}).ok());
  ASSERT_THAT(ReadKernelVerdicts(path, "one"), SizeIs(1));
  EXPECT_EQ(ReadKernelVerdicts(path, "one")[0].outcome, KernelVerdict::Outcome::kWrong);
  ASSERT_THAT(ReadKernelVerdicts(path, "two"), SizeIs(1));
  EXPECT_EQ(ReadKernelVerdicts(path, "two")[0].outcome, KernelVerdict::Outcome::kCrashed);
  // No temporary file is left beside it.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(BlasKernelCacheTest, AnUnusableFileIsNoCache) {
  TempFolder folder;
  const std::string path = folder / "blas-kernel.json";
  for (const std::string& text :
       {std::string("not json"), std::string("[]"), std::string("{\"version\": 2, \"entries\": []}"),
        std::string("{\"version\": 1, \"entries\": {}}"),
        std::string("{\"version\": 1, \"entries\": [{\"key\": \"k\", \"verdicts\": 7}]}"),
        std::string("{\"version\": 1, \"entries\": [{\"key\": \"k\", \"verdicts\": [{\"kernel\": \"SkylakeX\", "
                    "\"outcome\": \"fine\", \"ran\": \"SkylakeX\", \"detail\": \"\"}, {\"kernel\": 3}]}]}"),
        std::string(2 << 20, ' ')}) {
    WriteBytes(path, text);
    EXPECT_THAT(ReadKernelVerdicts(path, "k"), IsEmpty()) << text.substr(0, 80);
  }
  EXPECT_THAT(ReadKernelVerdicts(folder / "missing.json", "k"), IsEmpty());
  EXPECT_THAT(ReadKernelVerdicts("", "k"), IsEmpty());
}

TEST(BlasKernelCacheTest, AGoodVerdictBesideABadOneIsRead) {
  TempFolder folder;
  const std::string path = folder / "blas-kernel.json";
  WriteBytes(path,
             "{\"version\": 1, \"entries\": [{\"key\": \"k\", \"verdicts\": [{\"kernel\": 3}, {\"kernel\": \"Haswell\", "
             "\"outcome\": \"passed\", \"ran\": \"Haswell\", \"detail\": \"ok\"}]}]}");
  ASSERT_THAT(ReadKernelVerdicts(path, "k"), SizeIs(1));
  EXPECT_EQ(ReadKernelVerdicts(path, "k")[0].kernel, "Haswell");
}

TEST(BlasKernelCacheTest, AFolderThatCannotBeMadeIsAnError) {
  TempFolder folder;
  WriteBytes(folder / "file", "x");
  const Status status = WriteKernelVerdicts(folder / "file/sub/blas-kernel.json", "k", "t", {});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("cannot create"));
  EXPECT_EQ(WriteKernelVerdicts("", "k", "t", {}).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace rung
