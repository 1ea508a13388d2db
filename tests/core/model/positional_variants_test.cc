// Positional variants and inverse-temperature schedules against their formulas (docs/science.md sections
// 2-3), and the learned absolute position embedding (section 13).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config/model_arithmetic.h"
#include "core/model/absolute_position.h"
#include "core/model/inverse_temperature.h"
#include "core/model/positional_encoding.h"
#include "core/model/rotary.h"
#include "core/model/transformer.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

using testing_models::Tiny;

void Randomize(const std::vector<torch::Tensor>& params, double scale) {
  torch::NoGradGuard no_grad;
  for (auto param : params) param.add_(torch::randn(param.sizes(), param.options()) * scale);
}

// Logits q_i . k_j for queries and keys rotated at positions offset..offset+T-1.
torch::Tensor RotatedLogits(PositionalEncoding& positional, const torch::Tensor& q, const torch::Tensor& k,
                            int64_t offset, int64_t layer) {
  const int64_t time = q.size(1);
  LayerTables tables = positional->Tables(offset + time, torch::kCPU)[layer];
  auto cos = tables.cos.narrow(0, offset, time).contiguous();
  auto sin = tables.sin.narrow(0, offset, time).contiguous();
  auto qr = RotateAndTranspose(q, cos, sin, torch::Tensor());
  auto kr = RotateAndTranspose(k, cos, sin, torch::Tensor());
  return torch::matmul(qr, kr.transpose(-1, -2));
}

TEST(PositionalVariants, RotaryLogitsDependOnlyOnRelativePosition) {
  for (const char* variant : {"rope", "prope", "lerope", "adarope"}) {
    torch::manual_seed(1);
    ModelConfig config = Tiny(variant);
    PositionalEncoding positional(config);
    Randomize(positional->parameters(), 0.3);
    auto q = torch::randn({2, 10, config.heads, config.head_dim});
    auto k = torch::randn({2, 10, config.heads, config.head_dim});
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      auto base = RotatedLogits(positional, q, k, 0, layer);
      auto shifted = RotatedLogits(positional, q, k, 37, layer);
      EXPECT_TRUE(torch::allclose(base, shifted, 1e-4, 1e-4)) << variant << " layer " << layer;
    }
  }
}

TEST(PositionalVariants, LeropeAtZeroAndAdaropeAtInitGiveRopeLogits) {
  auto logits_of = [](const std::string& variant) {
    torch::manual_seed(7);  // the backbone is initialised before any positional parameter
    Transformer model(Tiny(variant));
    auto tokens = torch::randint(0, 64, {2, 24}, torch::kLong);
    torch::NoGradGuard no_grad;
    return model->forward(tokens);
  };
  auto rope = logits_of("rope");
  for (const char* variant : {"lerope", "adarope"}) {
    auto other = logits_of(variant);
    auto relative = ((other - rope).abs().max() / rope.abs().max()).item<double>();
    EXPECT_LE(relative, 1e-6) << variant;
  }
}

TEST(PositionalVariants, PartialRopeLeavesItsSlowPairsUnrotated) {
  ModelConfig config = Tiny("prope");
  config.head_dim = 16;
  config.heads = 2;
  config.position.fraction = 0.75;  // floor(0.75 * 8) = 6 rotating pairs
  PositionalEncoding positional(config);
  LayerTables tables = positional->Tables(12, torch::kCPU)[0];
  auto x = torch::randn({1, 12, 2, 16});
  auto out = RotateAndTranspose(x, tables.cos, tables.sin, torch::Tensor()).permute({0, 2, 1, 3});
  EXPECT_TRUE(torch::equal(out.narrow(-1, 12, 4), x.narrow(-1, 12, 4)));
  EXPECT_FALSE(torch::allclose(out.narrow(-1, 0, 12), x.narrow(-1, 0, 12)));
  auto theta = positional->Frequencies(0).view({8});
  EXPECT_EQ(theta.narrow(0, 6, 2).abs().sum().item<double>(), 0.0);
  EXPECT_NEAR(theta[1].item<double>(), std::pow(10000.0, -2.0 / 16.0), 1e-7);
}

TEST(PositionalVariants, NopeAndAlibiRotateNothing) {
  for (const char* variant : {"nope", "alibi"}) {
    PositionalEncoding positional(Tiny(variant));
    for (const LayerTables& tables : positional->Tables(8, torch::kCPU)) {
      EXPECT_FALSE(tables.cos.defined()) << variant;
      EXPECT_FALSE(tables.query_scale.defined()) << variant;
    }
    EXPECT_EQ(positional->parameters().size(), 0u) << variant;
  }
}

// A NoPE model with `absolute`'s backbone whose input embedding row p is token p's row plus the
// position table's row at min(p, n_train - 1): fed the tokens 0..T-1 it sees, layer by layer, what
// `absolute` sees at positions 0..T-1 when the table's rows are added as section 13 says.
Transformer NopeWithPositionsInItsEmbedding(Transformer& absolute, const torch::Tensor& tokens) {
  ModelConfig config = absolute->config();
  config.position.variant = "nope";
  Transformer nope(config);
  torch::NoGradGuard no_grad;
  auto source = absolute->named_parameters();
  for (auto& item : nope->named_parameters()) item.value().copy_(source[item.key()]);
  const int64_t time = tokens.size(0), rows = source["position_embedding"].size(0);
  for (int64_t p = 0; p < time; ++p) {
    nope->named_parameters()["embedding"][p].copy_(source["embedding"][tokens[p].item<int64_t>()] +
                                                   source["position_embedding"][std::min(p, rows - 1)]);
  }
  return nope;
}

TEST(AbsolutePosition, AddsRowPOfTheTableToTheTokenEmbeddingAtPositionP) {
  torch::manual_seed(3);
  ModelConfig config = Tiny("absolute");  // n_train 24, vocab 64
  Transformer absolute(config);
  Randomize({absolute->named_parameters()["position_embedding"]}, 0.5);  // rows far apart
  auto tokens = torch::randint(0, 64, {24}, torch::kLong);
  Transformer nope = NopeWithPositionsInItsEmbedding(absolute, tokens);
  torch::NoGradGuard no_grad;
  auto logits = absolute->forward(tokens.view({1, 24}));
  EXPECT_TRUE(torch::allclose(logits, nope->forward(torch::arange(24, torch::kLong).view({1, 24})), 1e-5, 1e-6));
  // Not vacuous: without the table's rows the logits differ.
  auto without = absolute->named_parameters()["position_embedding"].clone();
  absolute->named_parameters()["position_embedding"].zero_();
  EXPECT_FALSE(torch::allclose(logits, absolute->forward(tokens.view({1, 24})), 1e-3, 1e-3));
  absolute->named_parameters()["position_embedding"].copy_(without);
  // A shorter sequence uses the first rows.
  auto prefix = absolute->forward(tokens.narrow(0, 0, 10).view({1, 10}));
  EXPECT_TRUE(torch::allclose(prefix, logits.narrow(1, 0, 10), 1e-5, 1e-6));
}

TEST(AbsolutePosition, BeyondTheTableClampsToTheLastRowOrRefuses) {
  torch::manual_seed(4);
  ModelConfig config = Tiny("absolute");
  config.position.absolute.beyond = "clamp";
  Transformer clamp(config);
  Randomize({clamp->named_parameters()["position_embedding"]}, 0.5);
  auto tokens = torch::randint(0, 64, {40}, torch::kLong);  // 16 positions past n_train = 24
  Transformer nope = NopeWithPositionsInItsEmbedding(clamp, tokens);
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::allclose(clamp->forward(tokens.view({1, 40})),
                                nope->forward(torch::arange(40, torch::kLong).view({1, 40})), 1e-5, 1e-6));
  }

  // The lookup itself: positions 24..39 all read row 23, and the gradient reaches that row once
  // per position.
  auto table = torch::randn({24, 8}, torch::requires_grad());
  auto rows = AbsolutePositionRows(table, 40, "clamp");
  ASSERT_EQ(rows.sizes().vec(), (std::vector<int64_t>{40, 8}));
  EXPECT_TRUE(torch::equal(rows.narrow(0, 0, 24), table));
  for (int64_t p = 24; p < 40; ++p) EXPECT_TRUE(torch::equal(rows[p], table[23])) << p;
  rows.sum().backward();
  EXPECT_TRUE(torch::equal(table.grad().narrow(0, 0, 23), torch::ones({23, 8})));
  EXPECT_TRUE(torch::equal(table.grad()[23], torch::full({8}, 17.0)));

  config.position.absolute.beyond = "refuse";
  Transformer refuse(config);
  torch::NoGradGuard no_grad;
  EXPECT_NO_THROW(refuse->forward(tokens.narrow(0, 0, 24).view({1, 24})));
  try {
    refuse->forward(tokens.view({1, 40}));
    ADD_FAILURE() << "a sequence longer than the table was not refused";
  } catch (const c10::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("a sequence of 40 positions is longer than the position table (24 rows"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("position.absolute.beyond is refuse"), std::string::npos) << message;
  }
}

TEST(AbsolutePosition, TheTableIsAnEmbeddingParameterWithGpt2sInitialisation) {
  torch::manual_seed(0);
  ModelConfig config = Tiny("absolute");
  config.seq_len = 256;
  config.d_model = 64;
  config.head_dim = 16;
  Transformer absolute(config);
  auto params = absolute->named_parameters();
  ASSERT_TRUE(params.contains("position_embedding"));
  const torch::Tensor table = params["position_embedding"];
  EXPECT_EQ(table.sizes().vec(), (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(table.scalar_type(), torch::kFloat);
  EXPECT_NEAR(table.std().item<double>(), 0.02, 0.0005);
  EXPECT_NEAR(table.mean().item<double>(), 0.0, 0.0005);
  // Counted as section 13 says: among the embedding parameters, none of them positional.
  int64_t count = 0;
  for (const auto& param : absolute->parameters()) count += param.numel();
  const ParameterCounts counts = CountParameters(config);
  EXPECT_EQ(count, counts.total());
  EXPECT_EQ(counts.embedding, 64 * 64 + 256 * 64);
  EXPECT_EQ(counts.positional, 0);
  EXPECT_TRUE(absolute->positional()->parameters().empty());
  // No weight decay: the embedding's group (no_decay), at the backbone's learning rate.
  ParameterGroups groups = absolute->parameter_groups();
  auto holds = [&](const std::vector<torch::Tensor>& group) {
    return std::any_of(group.begin(), group.end(), [&](const torch::Tensor& t) { return t.is_same(table); });
  };
  EXPECT_TRUE(holds(groups.no_decay));
  EXPECT_FALSE(holds(groups.decay) || holds(groups.positional) || holds(groups.positional_freq));
  // Drawn after the backbone: under one seed the backbone starts where NoPE's does.
  ModelConfig nope_config = config;
  nope_config.position.variant = "nope";
  torch::manual_seed(0);
  Transformer nope(nope_config);
  for (const auto& item : nope->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), params[item.key()])) << item.key();
  }
}

TEST(PositionalVariants, AlibiSlopesAreTheStandardSet) {
  std::vector<double> eight = AlibiSlopes(8);
  ASSERT_EQ(eight.size(), 8u);
  for (int h = 0; h < 8; ++h) EXPECT_DOUBLE_EQ(eight[h], std::pow(2.0, -(h + 1)));
  // Six heads: the 4-head slopes, then every other slope of the 8-head set.
  std::vector<double> six = AlibiSlopes(6);
  std::vector<double> expected = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  ASSERT_EQ(six.size(), expected.size());
  for (size_t h = 0; h < expected.size(); ++h) EXPECT_DOUBLE_EQ(six[h], expected[h]);
}

double AdaScaleFormula(double tau, double gamma, double length, double l_ref) {
  return (1.0 / tau) * std::pow(std::log(1.0 + std::max(length, l_ref) / l_ref), gamma);
}

TEST(PositionalVariants, SharedAdaScaleGivesEveryHeadOfALayerOrOfTheModelOneTauAndGamma) {
  for (const std::string share : {"layer", "global"}) {
    ModelConfig config = Tiny("adarope");
    config.position.adarope.l_ref = 4.0;
    config.position.adarope.share_scale = share;
    PositionalEncoding positional(config);
    const int64_t rows = share == "global" ? 1 : config.layers;
    {
      torch::NoGradGuard no_grad;
      auto params = positional->named_parameters();
      ASSERT_EQ(params["adascale_tau"].sizes(), torch::IntArrayRef({rows, 1})) << share;
      ASSERT_EQ(params["adascale_gamma"].sizes(), torch::IntArrayRef({rows, 1})) << share;
      params["adascale_tau"].copy_(torch::tensor({0.5, 2.0}).narrow(0, 0, rows).view({rows, 1}));
      params["adascale_gamma"].copy_(torch::tensor({1.5, -0.5}).narrow(0, 0, rows).view({rows, 1}));
    }
    const auto tables = positional->Tables(20, torch::kCPU);
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      const int64_t row = share == "global" ? 0 : layer;
      const double tau = row == 0 ? 0.5 : 2.0, gamma = row == 0 ? 1.5 : -0.5;
      const torch::Tensor scale = tables[layer].query_scale;  // [T, H]
      ASSERT_EQ(scale.size(1), config.heads);
      for (int64_t position : {0, 5, 19}) {
        for (int64_t h = 0; h < config.heads; ++h) {
          EXPECT_NEAR(scale[position][h].item<double>(), AdaScaleFormula(tau, gamma, position + 1, 4.0), 1e-5)
              << share << " layer " << layer << " head " << h;
        }
      }
    }
  }
}

TEST(PositionalVariants, AdaScaleFollowsItsFormula) {
  ModelConfig config = Tiny("adarope");
  config.position.adarope.l_ref = 4.0;
  PositionalEncoding positional(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& item : positional->named_parameters()) {
      if (item.key() == "adascale_tau") item.value().copy_(torch::tensor({{0.5, 1.0, 2.0, 1.5}, {1.0, 1.0, 1.0, 1.0}}));
      if (item.key() == "adascale_gamma") item.value().copy_(torch::tensor({{1.0, 0.5, -0.5, 2.0}, {0.0, 0.0, 0.0, 0.0}}));
    }
  }
  auto scale = positional->Tables(20, torch::kCPU)[0].query_scale;  // [T, H]
  const double taus[] = {0.5, 1.0, 2.0, 1.5}, gammas[] = {1.0, 0.5, -0.5, 2.0};
  for (int64_t position : {0, 2, 3, 4, 10, 19}) {
    for (int h = 0; h < 4; ++h) {
      EXPECT_NEAR(scale[position][h].item<double>(), AdaScaleFormula(taus[h], gammas[h], position + 1, 4.0), 1e-5)
          << "position " << position << " head " << h;
    }
  }
  // L <= L_ref: lambda = ln(2)^gamma / tau
  EXPECT_NEAR(scale[0][0].item<double>(), std::log(2.0) / 0.5, 1e-6);

  config.position.adarope.length = "sequence";
  PositionalEncoding sequence_mode(config);
  auto constant = sequence_mode->Tables(20, torch::kCPU)[1].query_scale;
  EXPECT_TRUE(torch::allclose(constant, torch::ones_like(constant)));  // gamma 0, tau 1 at init

  config.position.adarope.length = "query";
  config.position.adarope.fixed_log = true;
  PositionalEncoding fixed(config);
  auto fixed_scale = fixed->Tables(20, torch::kCPU)[0].query_scale;
  EXPECT_NEAR(fixed_scale[2][0].item<double>(), 1.0, 1e-6);
  EXPECT_NEAR(fixed_scale[15][3].item<double>(), std::log(1.0 + 16.0 / 4.0) / std::log(2.0), 1e-5);
  EXPECT_EQ(fixed->parameters().size(), 1u);  // only AdaFreq

  config.position.adarope.fixed_log = false;
  config.position.adarope.tau_param = "exp";
  PositionalEncoding exp_tau(config);
  auto unit = exp_tau->Tables(20, torch::kCPU)[0].query_scale;
  EXPECT_TRUE(torch::allclose(unit, torch::ones_like(unit)));  // rho = 0 -> tau = 1
}

TEST(PositionalVariants, AdaropeLearnedBaseAndSharingShapeTheFrequencies) {
  ModelConfig config = Tiny("adarope", 4, 2);
  PositionalEncoding per_group(config);
  EXPECT_EQ(per_group->Frequencies(1).sizes().vec(), (std::vector<int64_t>{2, 4}));
  config.position.adarope.share_freq = "layer";
  PositionalEncoding per_layer(config);
  EXPECT_EQ(per_layer->Frequencies(1).sizes().vec(), (std::vector<int64_t>{1, 4}));
  config.position.adarope.learned_base = true;
  config.position.base = 500.0;
  PositionalEncoding learned_base(config);
  auto theta = learned_base->Frequencies(0).view({4});
  for (int f = 0; f < 4; ++f) EXPECT_NEAR(theta[f].item<double>(), std::pow(500.0, -2.0 * f / 8.0), 1e-6);
}

TEST(InverseTemperatureSchedules, EveryFormGivesItsFormula) {
  ModelConfig config = Tiny("rope");
  config.seq_len = 16;
  auto value = [&](const std::string& form, double xi, int64_t n, int64_t time = 32) {
    config.inverse_temperature.form = form;
    config.inverse_temperature.xi = xi;
    config.inverse_temperature.n_ref = 16;
    InverseTemperature schedule(config);
    auto multipliers = schedule->Multipliers(time, torch::kCPU);
    return multipliers[0].defined() ? multipliers[0][n - 1][0].item<double>() : 1.0;
  };
  EXPECT_EQ(value("none", 0, 5), 1.0);
  for (int64_t n : {1, 2, 5, 16, 30}) {
    EXPECT_NEAR(value("log_power", 0.5, n), std::pow(std::log(std::max<double>(n, 2)) / std::log(16.0), 0.5), 1e-6) << n;
    EXPECT_NEAR(value("log_power", 2.0, n), std::pow(std::log(std::max<double>(n, 2)) / std::log(16.0), 2.0), 1e-6) << n;
    EXPECT_NEAR(value("qwen", 1.0, n), std::max(1.0, std::log(n) / std::log(16.0)), 1e-6) << n;
    EXPECT_NEAR(value("ssmax", 1.0, n), std::log(n) / std::log(16.0), 1e-6) << n;
    EXPECT_NEAR(value("learned", 1.0, n), 1.0, 1e-7) << n;  // beta = 1, s = 1, b = 0 at init
  }
  EXPECT_NEAR(value("log_power", 1.0, 16), 1.0, 1e-6);  // beta(n_ref) = s
  EXPECT_NEAR(value("log_power", 0.0, 7), 1.0, 1e-7);   // xi = 0 is `none`
}

TEST(InverseTemperatureSchedules, LearnedBetaHoldsOrExtendsBeyondTheTrainingLength) {
  ModelConfig config = Tiny("rope");
  config.seq_len = 16;
  config.inverse_temperature.form = "learned";
  InverseTemperature hold(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& item : hold->named_parameters()) {
      if (item.key() == "beta") {
        auto n = torch::arange(1, 17, torch::kFloat);
        item.value().copy_(n.clamp_min(2).log().pow(0.5));
      }
    }
  }
  auto held = hold->Multipliers(32, torch::kCPU)[0];
  EXPECT_NEAR(held[31][0].item<double>(), std::sqrt(std::log(16.0)), 1e-5);
  config.inverse_temperature.extend = "power_law";
  InverseTemperature extend(config);
  {
    torch::NoGradGuard no_grad;
    extend->named_parameters()["beta"].copy_(torch::arange(1, 17, torch::kFloat).clamp_min(2).log().pow(0.5));
  }
  auto extended = extend->Multipliers(32, torch::kCPU)[0];
  EXPECT_NEAR(extended[31][0].item<double>(), std::sqrt(std::log(32.0)), 1e-3);
}

// d loss / d theta by autograd against central differences, in double, for every learned
// positional and inverse-temperature parameter.
TEST(PositionalGradients, MatchFiniteDifferencesForEveryLearnedParameter) {
  struct Case { std::string variant, form; bool learned_base = false; bool tau_exp = false; };
  std::vector<Case> cases = {{"lerope", "none"},           {"adarope", "none"},
                             {"adarope", "none", true},    {"adarope", "none", false, true},
                             {"rope", "ssmax"},            {"rope", "learned"},
                             {"alibi", "log_power"}};
  for (const Case& c : cases) {
    torch::manual_seed(11);
    ModelConfig config = Tiny(c.variant, 4, 2);
    config.seq_len = 12;
    config.inverse_temperature.form = c.form;
    config.inverse_temperature.learn_s = true;
    config.inverse_temperature.n_ref = 12;
    config.position.adarope.learned_base = c.learned_base;
    config.position.adarope.tau_param = c.tau_exp ? "exp" : "direct";
    Transformer model(config);
    model->to(torch::kDouble);
    ParameterGroups groups = model->parameter_groups();
    std::vector<torch::Tensor> learned = groups.positional;
    learned.insert(learned.end(), groups.positional_freq.begin(), groups.positional_freq.end());
    ASSERT_FALSE(learned.empty()) << c.variant << "/" << c.form;
    Randomize(learned, 0.05);
    auto tokens = torch::randint(0, 64, {2, 12}, torch::kLong);
    auto targets = torch::randint(0, 64, {2, 12}, torch::kLong);
    auto loss_of = [&]() {
      auto logits = model->forward(tokens);
      return torch::nn::functional::cross_entropy(logits.view({-1, 64}), targets.view({-1}));
    };
    model->zero_grad();
    loss_of().backward();
    for (auto& param : learned) {
      ASSERT_TRUE(param.grad().defined()) << c.variant << "/" << c.form;
      auto flat = param.view({-1});
      auto grad = param.grad().view({-1});
      EXPECT_GT(grad.abs().max().item<double>(), 0.0) << "no gradient reaches a parameter of " << c.variant;
      for (int64_t index : {int64_t{0}, flat.numel() / 2, flat.numel() - 1}) {
        const double eps = 1e-6;
        double original;
        double plus, minus;
        {
          torch::NoGradGuard no_grad;
          original = flat[index].item<double>();
          flat[index] = original + eps;
          plus = loss_of().item<double>();
          flat[index] = original - eps;
          minus = loss_of().item<double>();
          flat[index] = original;
        }
        double numeric = (plus - minus) / (2 * eps);
        double analytic = grad[index].item<double>();
        EXPECT_NEAR(analytic, numeric, 1e-6 + 1e-4 * std::fabs(numeric))
            << c.variant << "/" << c.form << " index " << index;
      }
    }
  }
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

TEST(LengthExtension, PositionInterpolationDividesEveryFrequency) {
  auto theta = torch::tensor(RopeFrequencies(10000.0, 16));
  auto pi = ExtendFrequencies(theta, {"pi", 4.0, 128.0});
  EXPECT_TRUE(torch::allclose(pi, theta / 4.0));
  EXPECT_TRUE(torch::equal(ExtendFrequencies(theta, {"none", 4.0, 128.0}), theta));
  EXPECT_TRUE(torch::equal(ExtendFrequencies(theta, {"pi", 1.0, 128.0}), theta));  // nothing at 1x
}

TEST(LengthExtension, NtkByPartsKeepsFastPairsAndInterpolatesSlowOnes) {
  const double train_length = 128.0, scale = 4.0;
  auto theta = torch::tensor(RopeFrequencies(10000.0, 32));
  auto extended = ExtendFrequencies(theta, {"ntk_by_parts", scale, train_length});
  for (int64_t f = 0; f < theta.size(0); ++f) {
    const double turns = theta[f].item<double>() * train_length / (2 * M_PI);
    const double original = theta[f].item<double>(), value = extended[f].item<double>();
    if (turns >= 32) EXPECT_DOUBLE_EQ(value, original) << f;
    if (turns <= 1) EXPECT_NEAR(value, original / scale, 1e-6 * original) << f;
    if (turns > 1 && turns < 32) {
      const double keep = (turns - 1) / 31;
      EXPECT_NEAR(value, (1 - keep) * original / scale + keep * original, 1e-6 * original) << f;
    }
  }
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor({"yarn", scale, train_length}), std::pow(0.1 * std::log(scale) + 1, 2));
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor({"ntk_by_parts", scale, train_length}), 1.0);
  // YaRN's temperature coefficient c is a setting: (c ln s + 1)^2.
  LengthExtension hotter{"yarn", scale, train_length};
  hotter.yarn_c = 0.3;
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor(hotter), std::pow(0.3 * std::log(scale) + 1, 2));
  hotter.yarn_c = 0.0;
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor(hotter), 1.0);
}

TEST(LengthExtension, DynamicNtkIsRopeWithTheBaseRescaledForTheLength) {
  const double scale = 4.0, base = 10000.0;
  const int64_t head_dim = 16;
  auto theta = torch::tensor(RopeFrequencies(base, head_dim), torch::kDouble).view({1, -1});
  auto extended = ExtendFrequencies(theta, {"dynamic_ntk", scale, 128.0});
  // b' = b s^(d/(d-2)): the fastest pair kept, the slowest divided by s.
  auto rescaled = torch::tensor(RopeFrequencies(base * std::pow(scale, 16.0 / 14.0), head_dim), torch::kDouble).view({1, -1});
  EXPECT_TRUE(torch::allclose(extended, rescaled, 1e-12, 0)) << extended << rescaled;
  EXPECT_DOUBLE_EQ(extended[0][0].item<double>(), theta[0][0].item<double>());
  EXPECT_NEAR(extended[0][7].item<double>(), theta[0][7].item<double>() / scale, 1e-15);
}

TEST(LengthExtension, DominantBandInterpolatesOnlyEachRowsDominantPair) {
  const double scale = 2.0;
  auto theta = torch::rand({2, 4}, torch::kDouble) + 0.1;  // two KV groups of 4 pairs
  LengthExtension extension{"dominant_band", scale, 64.0};
  extension.dominant_pairs = {{1, 3}, {0}};  // layer 0: rows 1 and 3; layer 1: pair 0 for every row
  auto layer0 = ExtendFrequencies(theta, extension, 0);
  auto layer1 = ExtendFrequencies(theta, extension, 1);
  for (int64_t row = 0; row < 2; ++row) {
    for (int64_t pair = 0; pair < 4; ++pair) {
      const double original = theta[row][pair].item<double>();
      EXPECT_DOUBLE_EQ(layer0[row][pair].item<double>(), pair == (row == 0 ? 1 : 3) ? original / scale : original);
      EXPECT_DOUBLE_EQ(layer1[row][pair].item<double>(), pair == 0 ? original / scale : original);
    }
  }
  EXPECT_TRUE(torch::equal(ExtendFrequencies(theta, {"dominant_band", 1.0, 64.0}), theta));  // nothing at 1x
}

TEST(LengthExtension, AFactorPerEntryGivesEachEntryTheExtensionAtItsOwnFactor) {
  auto theta = torch::tensor(RopeFrequencies(10000.0, 16), torch::kDouble).view({2, 4});  // two rows of 4 pairs
  auto scales = torch::tensor({1.0, 1.5, 3.0}).view({3, 1});                             // entries [3, 1]
  for (const char* method : {"none", "pi", "ntk_by_parts", "yarn", "dynamic_ntk", "dominant_band"}) {
    LengthExtension extension{method, 2.0, 64.0};
    extension.dominant_pairs = {{1, 2}};
    auto extended = ExtendFrequenciesAt(theta, scales, extension);
    ASSERT_EQ(extended.sizes(), (std::vector<int64_t>{3, 1, 2, 4})) << method;
    for (int64_t i = 0; i < 3; ++i) {
      LengthExtension alone = extension;
      alone.scale = scales[i][0].item<double>();
      EXPECT_TRUE(torch::allclose(extended[i][0], ExtendFrequencies(theta, alone), 1e-7, 0)) << method << " " << i;
    }
    auto factors = ExtensionLogitFactorAt(scales, extension);
    for (int64_t i = 0; i < 3; ++i) {
      LengthExtension alone = extension;
      alone.scale = scales[i][0].item<double>();
      EXPECT_NEAR(factors[i][0].item<double>(), ExtensionLogitFactor(alone), 1e-6) << method << " " << i;
    }
  }
}

TEST(LengthExtension, DocumentScalesReadEachDocumentsLengthInTheRow) {
  // Row 0: a document of 3 positions, then one of 9; row 1: one document of 12. Training length 4.
  auto doc_start = torch::tensor({0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                 torch::kLong).view({2, 12});
  auto scales = DocumentScales(doc_start, 4.0);
  ASSERT_EQ(scales.sizes(), (std::vector<int64_t>{2, 12}));
  for (int64_t t = 0; t < 12; ++t) {
    EXPECT_FLOAT_EQ(scales[0][t].item<float>(), t < 3 ? 1.0f : 9.0f / 4.0f) << t;  // s = min(1, 4 / 3) -> no extension
    EXPECT_FLOAT_EQ(scales[1][t].item<float>(), 3.0f) << t;
  }
}

TEST(LengthExtension, AdaRopeContextExtensionStartsFromNtkByPartsTauOverYarnsFactorAndGammaZero) {
  torch::manual_seed(3);
  ModelConfig config = Tiny("adarope", 4, 2);
  PositionalEncoding positional(config);
  torch::NoGradGuard no_grad;
  for (auto& parameter : positional->named_parameters()) parameter.value().add_(0.1 * torch::rand_like(parameter.value()));
  const torch::Tensor theta = positional->Frequencies(1).clone();
  const torch::Tensor tau = positional->named_parameters()["adascale_tau"].clone();
  positional->StartContextExtension("yarn", 4.0, 24.0, 0.1);
  EXPECT_TRUE(torch::allclose(positional->Frequencies(1), ExtendFrequencies(theta, {"ntk_by_parts", 4.0, 24.0}), 1e-5, 1e-7));
  // gamma = 0 makes lambda = 1 / tau: tau starts where AdaScale is YaRN's factor.
  EXPECT_TRUE(torch::allclose(positional->named_parameters()["adascale_tau"],
                              torch::full_like(tau, 1.0 / std::pow(0.1 * std::log(4.0) + 1, 2))));
  EXPECT_EQ(positional->named_parameters()["adascale_gamma"].abs().max().item<float>(), 0.0f);
}

// A RoPE model converted to AdaRoPE at a global schedule's start (train.init.adarope_start pi,
// ntk_by_parts or yarn, at any factor) computes, before it trains, what the RoPE model computes under
// that extension: the study that tunes YaRN's s and c by evaluating such starts (docs/findings.md
// section 11) rests on it.
TEST(LengthExtension, AnAdaRopeStartAtAGlobalScheduleComputesTheRopeModelUnderThatExtension) {
  for (const char* schedule : {"pi", "ntk_by_parts", "yarn"}) {
    for (const double scale : {4.0, 6.0}) {
      for (const char* share : {"none", "global"}) {
        SCOPED_TRACE(std::string(schedule) + " s=" + std::to_string(scale) + " share " + share);
        torch::manual_seed(31);
        ModelConfig rope_config = Tiny("rope", 4, 2);
        ModelConfig adarope_config = rope_config;
        adarope_config.position.variant = "adarope";
        adarope_config.position.adarope.l_ref = static_cast<double>(rope_config.seq_len);
        adarope_config.position.adarope.share_freq = share;
        adarope_config.position.adarope.share_scale = share;
        ResolveModelConfig(&adarope_config);
        Transformer rope(rope_config);
        Transformer adarope(adarope_config);
        torch::NoGradGuard no_grad;
        auto rope_parameters = rope->named_parameters();
        for (auto& parameter : adarope->named_parameters()) {
          if (parameter.key().rfind("positional.", 0) == 0) continue;
          parameter.value().copy_(rope_parameters[parameter.key()]);
        }
        const double source_length = static_cast<double>(rope_config.seq_len);
        adarope->positional()->StartContextExtension(schedule, scale, source_length, 0.2);
        LengthExtension extension{schedule, scale, source_length};
        extension.yarn_c = 0.2;
        rope->positional()->set_length_extension(extension);
        rope->eval();
        adarope->eval();
        const torch::Tensor tokens = torch::randint(0, rope_config.vocab_size, {2, 4 * rope_config.seq_len});
        const torch::Tensor expected = rope->forward(tokens);
        const torch::Tensor converted = adarope->forward(tokens);
        EXPECT_LT((converted - expected).abs().max().item<double>(), 1e-4);
        // And not trivially: the model without the extension differs.
        rope->positional()->set_length_extension(LengthExtension{});
        EXPECT_GT((rope->forward(tokens) - expected).abs().max().item<double>(), 1e-3);
      }
    }
  }
  // A learned base cannot hold an interpolation: refused, never a silent other model.
  ModelConfig based = Tiny("adarope", 4, 2);
  based.position.adarope.learned_base = true;
  ResolveModelConfig(&based);
  PositionalEncoding positional(based);
  EXPECT_ANY_THROW(positional->StartContextExtension("pi", 4.0, 24.0, 0.1));
  EXPECT_ANY_THROW(positional->StartContextExtension("ntk_by_parts", 4.0, 24.0, 0.1));
  EXPECT_ANY_THROW(positional->StartContextExtension("dynamic_ntk", 4.0, 24.0, 0.1));
}

// LeRoPE D.1's leave-one-out band ablation: the reverted pair turns at RoPE's frequency in every layer and
// row, every other pair at its learned one.
TEST(BandAblation, ARevertedPairTurnsAtRopesFrequencyAndTheOthersKeepTheirs) {
  for (const char* variant : {"lerope", "adarope"}) {
    torch::manual_seed(12);
    ModelConfig config = Tiny(variant, 4, 2);
    PositionalEncoding positional(config);
    torch::NoGradGuard no_grad;
    for (auto& parameter : positional->frequency_parameters()) parameter.add_(0.3 * torch::rand_like(parameter));
    for (auto& parameter : positional->scale_parameters()) parameter.add_(0.3 * torch::rand_like(parameter));
    const std::vector<double> rope = RopeFrequencies(config.position.base, config.head_dim);
    const int64_t time = 12, reverted = 2;
    positional->set_band_ablation(reverted, PositionalEncodingImpl::BandAblation::kRevertToRope);
    const std::vector<LayerTables> tables = positional->Tables(time, torch::kCPU);
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      const torch::Tensor learned = positional->Frequencies(layer);  // [G, pairs]
      for (int64_t row = 0; row < learned.size(0); ++row) {
        for (int64_t pair = 0; pair < learned.size(1); ++pair) {
          const double theta = pair == reverted ? rope[static_cast<size_t>(pair)] : learned[row][pair].item<double>();
          // angle at position t is t * theta: compare cos at t = 5.
          EXPECT_NEAR(tables[layer].cos[5][row][pair].item<double>(), std::cos(5.0 * theta), 1e-5)
              << variant << " layer " << layer << " row " << row << " pair " << pair;
        }
      }
    }
    positional->set_band_ablation(-1, PositionalEncodingImpl::BandAblation::kRevertToRope);
    const torch::Tensor learned = positional->Frequencies(0);
    EXPECT_NEAR(positional->Tables(time, torch::kCPU)[0].cos[5][0][reverted].item<double>(),
                std::cos(5.0 * learned[0][reverted].item<double>()), 1e-5);
  }
}

// LeRoPE D.1's ablation by zeroing: every query-key score of a head with the band zeroed is the score
// summed over every other band of the learned rotation (a hand sum of the per-band products).
TEST(BandAblation, AZeroedBandContributesNothingAndTheOthersTheirLearnedProducts) {
  for (const char* variant : {"lerope", "adarope"}) {
    torch::manual_seed(13);
    ModelConfig config = Tiny(variant, 4, 2);
    PositionalEncoding positional(config);
    torch::NoGradGuard no_grad;
    for (auto& parameter : positional->frequency_parameters()) parameter.add_(0.3 * torch::rand_like(parameter));
    const int64_t time = 10, zeroed = 1, half = config.head_dim / 2;
    const torch::Tensor q = torch::randn({1, time, config.heads, config.head_dim});
    const torch::Tensor k = torch::randn({1, time, config.heads, config.head_dim});
    const std::vector<LayerTables> learned = positional->Tables(time, torch::kCPU);
    positional->set_band_ablation(zeroed, PositionalEncodingImpl::BandAblation::kZero);
    const std::vector<LayerTables> ablated = positional->Tables(time, torch::kCPU);
    positional->set_band_ablation(-1, PositionalEncodingImpl::BandAblation::kZero);
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      auto rotate = [&](const torch::Tensor& x, const LayerTables& tables) {
        return RotateAndTranspose(x, tables.cos, tables.sin, torch::Tensor(), 1.0, RotaryImplementation::kComposite);
      };
      const torch::Tensor scores = torch::matmul(rotate(q, ablated[layer]), rotate(k, ablated[layer]).transpose(-1, -2));
      const torch::Tensor rq = rotate(q, learned[layer]), rk = rotate(k, learned[layer]);  // [1, H, T, d]
      torch::Tensor hand = torch::zeros_like(scores);
      for (int64_t band = 0; band < half; ++band) {
        if (band == zeroed) continue;
        const torch::Tensor qb = rq.narrow(-1, 2 * band, 2), kb = rk.narrow(-1, 2 * band, 2);
        hand += torch::matmul(qb, kb.transpose(-1, -2));
      }
      EXPECT_TRUE(torch::allclose(scores, hand, 1e-5, 1e-5)) << variant << " layer " << layer;
      // The fused CPU kernel reads the same tables.
      const torch::Tensor fused = torch::matmul(
          RotateAndTranspose(q.contiguous(), ablated[layer].cos, ablated[layer].sin, torch::Tensor(), 1.0, RotaryImplementation::kFusedCpu),
          RotateAndTranspose(k.contiguous(), ablated[layer].cos, ablated[layer].sin, torch::Tensor(), 1.0, RotaryImplementation::kFusedCpu)
              .transpose(-1, -2));
      EXPECT_TRUE(torch::allclose(fused, hand, 1e-5, 1e-5)) << variant << " layer " << layer << " (fused)";
    }
  }
}

TEST(LengthExtension, AppliesToTheTablesOfLearnedFrequenciesToo) {
  torch::manual_seed(2);
  ModelConfig config = testing_models::Tiny("lerope");
  PositionalEncoding positional(config);
  Randomize(positional->parameters(), 0.2);
  auto plain = positional->Tables(48, torch::kCPU)[0];
  positional->set_length_extension({"pi", 2.0, 24.0});
  auto interpolated = positional->Tables(48, torch::kCPU)[0];
  // position 2t under PI has the angles of position t without it
  EXPECT_TRUE(torch::allclose(interpolated.cos.narrow(0, 20, 1), plain.cos.narrow(0, 10, 1), 1e-5, 1e-6));
  positional->set_length_extension({});
  EXPECT_TRUE(torch::allclose(positional->Tables(48, torch::kCPU)[0].cos, plain.cos));
}

}  // namespace
}  // namespace rung
