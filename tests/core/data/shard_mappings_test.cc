// ShardMappings: at most its capacity mapped, least recently used dropped first, files mapped again on
// demand, and a file whose size changed since it was added refused rather than read past its end.
#include "core/data/shard_mappings.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::TempFolder;
using data_test::WriteBytes;

std::shared_ptr<const ShardMappings::Mapping> MappedOrNull(const std::string& path) {
  StatusOr<std::shared_ptr<const ShardMappings::Mapping>> mapped = ShardMappings::Map(path);
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  return mapped.ok() ? *mapped : nullptr;
}

TEST(ShardMappingsTest, KeepsAtMostItsCapacityAndMapsDroppedFilesAgain) {
  TempFolder folder;
  ShardMappings mappings(2);
  for (const char* name : {"a", "b", "c"}) {
    WriteBytes(folder / name, std::string("contents of ") + name);
    mappings.Add(folder / name, MappedOrNull(folder / name));
  }
  EXPECT_EQ(mappings.MappedCount(), 2u);
  StatusOr<std::shared_ptr<const ShardMappings::Mapping>> a = mappings.Get(0);  // dropped when c came
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*a)->data), static_cast<size_t>((*a)->bytes)), "contents of a");
  EXPECT_EQ(mappings.MappedCount(), 2u);
  // A holder keeps its mapping readable after the set drops it.
  ASSERT_TRUE(mappings.Get(1).ok());
  ASSERT_TRUE(mappings.Get(2).ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*a)->data), static_cast<size_t>((*a)->bytes)), "contents of a");
}

TEST(ShardMappingsTest, AFileWhoseSizeChangedIsDataLossAndAMissingOneNotFound) {
  TempFolder folder;
  ShardMappings mappings(1);
  WriteBytes(folder / "a", "0123456789");
  WriteBytes(folder / "b", "other");
  mappings.Add(folder / "a", MappedOrNull(folder / "a"));
  mappings.Add(folder / "b", MappedOrNull(folder / "b"));  // drops a
  WriteBytes(folder / "a", "01234");
  StatusOr<std::shared_ptr<const ShardMappings::Mapping>> shorter = mappings.Get(0);
  ASSERT_FALSE(shorter.ok());
  EXPECT_EQ(shorter.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(shorter.status().message().find("has 5 bytes, but had 10"), std::string::npos) << shorter.status().ToString();
  EXPECT_EQ(ShardMappings::Map(folder / "missing").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rung
