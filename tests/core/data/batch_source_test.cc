#include "core/data/batch_source.h"

#include <gtest/gtest.h>

#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::SampleCorpusPath;
using data_test::TempFolder;
using data_test::WriteTokens;

TEST(MakeBatchSourceTest, BuildsTheSourceTheConfigNames) {
  DataConfig text;
  text.source = "text";
  text.path = SampleCorpusPath();
  text.seq_len = 32;
  text.val_fraction = 0.3;
  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(text, 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->vocab_size(), 256);
  EXPECT_EQ((*source)->Describe()["source"], "text");

  TempFolder folder;
  std::vector<uint32_t> ids(400);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i % 300);
  WriteTokens(folder / "a.bin", ids, 2);
  DataConfig shards;
  shards.source = "shards";
  shards.path = folder.path();
  shards.vocab_size = 300;
  shards.seq_len = 16;
  source = MakeBatchSource(shards, 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->vocab_size(), 300);

  DataConfig nrw;
  nrw.source = "nrw";
  nrw.seq_len = 64;
  nrw.nrw.window_centre = 20;
  nrw.nrw.window_width = 8;
  source = MakeBatchSource(nrw, 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->vocab_size(), 5);
  EXPECT_EQ((*source)->Batch(Split::kTrain, 0, 2, 64).loss_mask.size(), 128u);
}

TEST(MakeBatchSourceTest, MissingPathIsNotFound) {
  DataConfig config;
  config.source = "text";
  config.path = "/nonexistent/rung/text";
  EXPECT_EQ(MakeBatchSource(config, 0).status().code(), StatusCode::kNotFound);
  config.source = "shards";
  config.vocab_size = 100;
  EXPECT_EQ(MakeBatchSource(config, 0).status().code(), StatusCode::kNotFound);
}

TEST(MakeBatchSourceTest, InvalidConfigIsInvalidArgument) {
  DataConfig config;
  config.source = "text";  // no path
  EXPECT_EQ(MakeBatchSource(config, 0).status().code(), StatusCode::kInvalidArgument);
  config.source = "nrw";
  config.seq_len = 64;  // window centre 512 does not fit
  EXPECT_EQ(MakeBatchSource(config, 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung
