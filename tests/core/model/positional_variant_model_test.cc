// Every positional variant has both parts, and the model parts keep the parameter and buffer names
// checkpoints hold.
#include "core/model/positional_variant_model.h"

#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/config/positional_variant.h"
#include "core/model/transformer.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

TEST(PositionalVariantModel, EveryRegisteredVariantHasAModelPartAndNoModelPartLacksAVariant) {
  std::vector<std::string> variants = PositionalVariantNames();
  std::vector<std::string> models = PositionalVariantModelNames();
  std::sort(variants.begin(), variants.end());
  std::sort(models.begin(), models.end());
  EXPECT_EQ(variants, models);
}

std::set<std::string> PositionalNames(const std::string& variant) {
  ModelConfig config = testing_models::Tiny(variant);
  Transformer model(config);
  std::set<std::string> names;
  for (const auto& item : model->named_parameters()) {
    if (item.key().rfind("blocks_", 0) == 0) continue;
    names.insert(item.key());
  }
  for (const auto& item : model->named_buffers()) names.insert("buffer " + item.key());
  return names;
}

TEST(PositionalVariantModel, TheReleasedVariantsKeepTheirCheckpointNames) {
  const std::set<std::string> backbone = {"embedding", "final_norm", "head"};
  auto with = [&](std::set<std::string> extra) {
    extra.insert(backbone.begin(), backbone.end());
    return extra;
  };
  const std::set<std::string> rotary = {"buffer positional.rope_log_freq", "buffer positional.rotate_mask"};
  EXPECT_EQ(PositionalNames("nope"), with({}));
  EXPECT_EQ(PositionalNames("rope"), with(rotary));
  EXPECT_EQ(PositionalNames("prope"), with(rotary));
  EXPECT_EQ(PositionalNames("lerope"), with({"buffer positional.rope_log_freq", "buffer positional.rotate_mask",
                                             "positional.lerope_log_scale"}));
  EXPECT_EQ(PositionalNames("adarope"),
            with({"buffer positional.rope_log_freq", "buffer positional.rotate_mask", "positional.adarope_log_freq",
                  "positional.adascale_tau", "positional.adascale_gamma"}));
  EXPECT_EQ(PositionalNames("alibi"), with({"buffer positional.alibi_slopes"}));
  EXPECT_EQ(PositionalNames("absolute"), with({"position_embedding"}));
}

}  // namespace
}  // namespace rung
