#include "sweeps/plot/diagnostics_plot.h"
#include "sweeps/plot/probe_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/sweeps/plot_test_files.h"
#include "core/records/record_json.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path FreshDiagnosticsDir(const std::string& name) { return plot_testing::FreshDir("rung_diag_plot_test_", name); }
using plot_testing::Read;

// A payload from its stored JSON form (the records' codec).
template <class Payload>
Payload Typed(const json& document) {
  Payload payload;
  const Status read = records::DecodeDocument(document.dump(), &payload);
  EXPECT_TRUE(read.ok()) << read.ToString();
  return payload;
}

// An attention payload in its stored form: two layers of two heads, T = 8.
json AttentionRecord() {
  json layers = json::array();
  for (int layer = 0; layer < 2; ++layer) {
    json heads = json::array();
    for (int head = 0; head < 2; ++head) {
      heads.push_back({{"head", head},
                       {"effective_length_by_position", {1.0, 1.8, 2.5, 3.1, 3.6, 4.0, 4.3, 4.6}},
                       {"pair_usage", {0.1 * (head + 1), 0.4, 0.2, 0.05}},
                       {"pair_usage_cv", 0.6},
                       {"dominant_pair", 1 + head},
                       {"dominant_wavelength_over_training_length", 2.2}});
    }
    layers.push_back({{"layer", layer},
                      {"heads", heads},
                      {"gap_counting",
                       {{"buckets",
                         {{{"n", 2}, {"mean_log_lambda", 0.5}},
                          {{"n", 4}, {"mean_log_lambda", 0.8}},
                          {{"n", 8}, {"mean_log_lambda", 1.0 + 0.1 * layer}}}},
                        {"xi_lambda", 0.62},
                        {"xi_lambda_half_iqr", 0.22}}}});
  }
  return {{"length", 8}, {"layers", layers}};
}

TEST(DiagnosticsPlot, DrawsEffectiveLengthPairUsageGapCountingAndExtrapolation) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  }
  const fs::path dir = FreshDiagnosticsDir("all");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 7: lerope";
  const json extrapolation = {{{"multiple", 2}, {"method", "none"}, {"val_loss", 2.5},
                               {"val_loss_per_position", {2.0, 2.1, 2.2, 2.4, 2.6, 2.9, 3.0, 3.1}}},
                              {{"multiple", 2}, {"method", "yarn"}, {"val_loss", 2.2},
                               {"val_loss_per_position", {2.0, 2.0, 2.1, 2.2, 2.2, 2.3, 2.3, 2.4}}}};
  StatusOr<std::vector<std::string>> files =
      WriteDiagnosticsPlots(Typed<records::AttentionDiagnostics>(AttentionRecord()),
                            Typed<std::vector<records::ExtrapolationResult>>(extrapolation), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 8u);
  for (const std::string& file : *files) EXPECT_GT(fs::file_size(file), 1000u) << file;
  EXPECT_EQ(Read(dir / "pair_usage.png").substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Every head is a row of the heatmap, each divided by its own maximum.
  const std::string usage = Read(dir / "pair_usage.dat");
  EXPECT_EQ(std::count(usage.begin(), usage.end(), '\n'), 4);
  EXPECT_EQ(usage.substr(0, usage.find('\n')), "0.25 1 0.5 0.125");
  EXPECT_NE(Read(dir / "gap_counting.svg").find("0.62 ± 0.22"), std::string::npos);
  EXPECT_NE(Read(dir / "effective_length.svg").find("L1.h1"), std::string::npos);
  EXPECT_NE(Read(dir / "extrapolation.svg").find("2x, yarn"), std::string::npos);
  fs::remove_all(dir);
}

// Buckets per n, the half-IQR, a pooled fit; a layer whose rows are all ties has no curve.
TEST(DiagnosticsPlot, DrawsEachLayersBucketsAndThePooledCurve) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  json record = AttentionRecord();
  auto buckets = [](double offset, bool ties_only) {
    json list = json::array();
    for (int n : {2, 4, 8}) {
      list.push_back({{"n", n}, {"rows", ties_only ? 0 : 4}, {"ties", ties_only ? 4 : 0},
                      {"mean_log_lambda", ties_only ? json() : json(offset + 0.25 * n)}});
    }
    return list;
  };
  record["layers"][0]["gap_counting"] = {{"buckets", buckets(0.0, true)}, {"rows", 0}, {"ties", 12}};
  record["layers"][1]["gap_counting"] = {{"buckets", buckets(0.5, false)}, {"xi_lambda", 0.71}, {"xi_lambda_half_iqr", 0.04}};
  record["pooled"] = {{"buckets", buckets(0.5, false)}, {"xi_lambda", 0.71}, {"xi_lambda_half_iqr", 0.04}};
  const fs::path dir = FreshDiagnosticsDir("buckets");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files =
      WriteDiagnosticsPlots(Typed<records::AttentionDiagnostics>(record), {}, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  const std::string data = Read(dir / "gap_counting.dat");
  EXPECT_EQ(data.find("# layer 0"), std::string::npos) << "a layer of ties has no curve";
  EXPECT_NE(data.find("# layer 1"), std::string::npos);
  EXPECT_NE(data.find("# pooled"), std::string::npos);
  EXPECT_NE(Read(dir / "gap_counting.svg").find("pooled: "), std::string::npos);
  EXPECT_NE(Read(dir / "gap_counting.svg").find("0.71 ± 0.04"), std::string::npos);
  // Every row of every layer a tie: no gap-counting figure, the others still drawn.
  record["layers"][1]["gap_counting"] = record["layers"][0]["gap_counting"];
  record.erase("pooled");
  const fs::path empty = FreshDiagnosticsDir("all_ties");
  options.out_dir = empty.string();
  files = WriteDiagnosticsPlots(Typed<records::AttentionDiagnostics>(record), {}, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 4u);
  EXPECT_FALSE(fs::exists(empty / "gap_counting.svg"));
  fs::remove_all(dir);
  fs::remove_all(empty);
}

TEST(DiagnosticsPlot, DrawsTheNeedleGridAsOneHeatmapPerLengthAndMethod) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  json grids = json::array();
  for (int multiple : {1, 2}) {
    grids.push_back({{"multiple", multiple}, {"length", 64 * multiple}, {"method", multiple == 1 ? "none" : "yarn"},
                     {"accuracy", {{1.0, 0.5, 0.25}, {0.75, 0.5, json()}}}});
  }
  const json grid = {{"depths", {0.0, 1.0}}, {"distractors", {0, 1, 2}}, {"instances", 4}, {"grids", grids}};
  const fs::path dir = FreshDiagnosticsDir("niah");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 9";
  StatusOr<std::vector<std::string>> files = WriteNiahGridPlot(Typed<records::NiahGridDiagnostics>(grid), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 4u);
  EXPECT_TRUE(fs::exists(dir / "niah_2x_yarn.svg"));
  EXPECT_EQ(Read(dir / "niah_1x_none.dat"), "1 0.5 0.25\n0.75 0.5 NaN\n");
  EXPECT_NE(Read(dir / "niah_2x_yarn.svg").find("128 tokens"), std::string::npos);
  EXPECT_EQ(WriteNiahGridPlot(records::NiahGridDiagnostics(), options).status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, TheIndexingProbeIsDrawnAsAccuracyAgainstPromptTokensWithTheListsSpreadAndChance) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  std::vector<records::ProbeResult> cells;
  for (const auto& [elements, accuracy, sd] : {std::tuple<int64_t, double, double>{4, 1.0, 0.0}, {64, 0.37, 0.125}}) {
    records::ProbeResult cell;
    cell.probe = "indexing";
    cell.score = "choice";
    cell.method = "none";
    cell.depth = -1;
    cell.length = 3 * elements + 110;
    cell.instances = 100;
    cell.correct = static_cast<int64_t>(std::lround(accuracy * 100));
    cell.accuracy = accuracy;
    cell.elements = elements;
    cell.lists = 10;
    cell.accuracy_sd = sd;
    cell.mean_tokens = 3.0 * static_cast<double>(elements) + 105.5;
    cell.chance = 0.25;
    cell.position_blind = elements == 4 ? 0.5 : 0.3;
    cells.push_back(cell);
  }
  const fs::path dir = FreshDiagnosticsDir("indexing");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 6";
  StatusOr<std::vector<std::string>> files = WriteProbePlot(cells, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir / "probe_indexing.svg").string(), (dir / "probe_indexing.png").string()}));
  EXPECT_EQ(Read(dir / "probe_indexing.dat"), "117.5 1 0 4 0.5\n297.5 0.37 0.125 64 0.3\n");
  const std::string svg = Read(dir / "probe_indexing.svg");
  EXPECT_NE(svg.find("chance (1/4)"), std::string::npos);
  EXPECT_NE(svg.find("10 lists per length"), std::string::npos);
  EXPECT_NE(svg.find("blind to position"), std::string::npos);
  if (::testing::Test::HasFailure()) return;  // the figure kept to look at
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, WithoutExtrapolationThereIsNoExtrapolationFigure) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDiagnosticsDir("no_extrapolation");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files =
      WriteDiagnosticsPlots(Typed<records::AttentionDiagnostics>(AttentionRecord()), {}, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 6u);
  EXPECT_FALSE(fs::exists(dir / "extrapolation.svg"));
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, AFrequencyProfileIsDrawnAsWavelengthsAgainstRopes) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDiagnosticsDir("profile");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "lerope";
  // Four pairs, base 10000, T = 2 pi: RoPE's wavelengths over T are 10000^(f/4) = 1, 10, 100, 1000.
  StatusOr<std::vector<std::string>> files =
      WriteFrequencyProfilePlot({{"layer 0", {1.0, 0.1, 0.0, 0.002}}}, 10000, 2 * M_PI, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 2u);
  const std::string data = Read(dir / "frequency_profile.dat");
  EXPECT_NE(data.find("# RoPE\n0 1\n1 10\n2 100\n3 1000\n"), std::string::npos) << data;
  EXPECT_NE(data.find("# layer 0\n0 1\n1 10\n2 NaN\n3 500\n"), std::string::npos) << data;  // theta 0: no wavelength
  EXPECT_EQ(WriteFrequencyProfilePlot({}, 10000, 128, options).status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, TheBandAblationDrawsTheRevertedAndTheZeroedBandSideBySide) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDiagnosticsDir("bands");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 3";
  const json both = {{"sequences", 4},
                     {"loss", 2.5},
                     {"pairs",
                      {{{"pair", 0}, {"rope_theta", 1.0}, {"loss", 2.625}, {"delta", 0.125}, {"zeroed_loss", 3.0}, {"zeroed_delta", 0.5}},
                       {{"pair", 1}, {"rope_theta", 0.1}, {"loss", 2.5}, {"delta", 0.0}, {"zeroed_loss", 2.75}, {"zeroed_delta", 0.25}}}}};
  ASSERT_TRUE(WriteBandAblationPlot(Typed<records::BandAblationDiagnostics>(both), options).ok());
  EXPECT_EQ(Read(dir / "band_ablation.dat"), "0 0.125 0.5\n1 0 0.25\n");
  EXPECT_NE(Read(dir / "band_ablation.svg").find("zeroed (LeRoPE D.1)"), std::string::npos);
  // A record from before the zeroing ablation: its reverted bars alone.
  json earlier = both;
  for (json& pair : earlier["pairs"]) {
    pair.erase("zeroed_loss");
    pair.erase("zeroed_delta");
  }
  ASSERT_TRUE(WriteBandAblationPlot(Typed<records::BandAblationDiagnostics>(earlier), options).ok());
  EXPECT_EQ(Read(dir / "band_ablation.dat"), "0 0.125 NaN\n1 0 NaN\n");
  EXPECT_EQ(Read(dir / "band_ablation.svg").find("zeroed (LeRoPE D.1)"), std::string::npos);
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, TheHeadInfluenceDrawsThreeBarsAHead) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDiagnosticsDir("influence");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 4";
  const json influence = {{"sequences", 2},
                          {"length", 64},
                          {"loss", 2.0},
                          {"frequency_unit", "kv_group"},
                          {"scale_unit", "head"},
                          {"heads",
                           {{{"layer", 0}, {"head", 0}, {"all", 0.25}, {"frequency", 0.125}, {"scale", 0.0625}},
                            {{"layer", 1}, {"head", 2}, {"all", 0.0}, {"frequency", 0.0}}}}};
  StatusOr<std::vector<std::string>> files = WriteHeadInfluencePlot(Typed<records::HeadInfluenceDiagnostics>(influence), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(Read(dir / "head_influence.dat"), "0 0.25 0.125 0.0625 L0H0\n1 0 0 NaN L1H2\n");
  const std::string svg = Read(dir / "head_influence.svg");
  EXPECT_NE(svg.find("AdaFreq reset (per kv_group)"), std::string::npos);
  EXPECT_NE(svg.find("L1H2"), std::string::npos);
  EXPECT_EQ(WriteHeadInfluencePlot(records::HeadInfluenceDiagnostics(), options).status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, GapCountingAtEachEvaluatedLengthIsOneCurveALength) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDiagnosticsDir("lengths");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 9";
  json at_t = AttentionRecord();
  at_t["pooled"] = {{"buckets", {{{"n", 2}, {"mean_log_lambda", 0.5}}, {{"n", 8}, {"mean_log_lambda", 1.0}}}},
                    {"xi_lambda", 0.62},
                    {"xi_lambda_half_iqr", 0.22}};
  json beyond = at_t;
  beyond["length"] = 32;
  beyond["multiple"] = 4;
  beyond["method"] = "dynamic_ntk";
  beyond["pooled"] = {{"buckets", {{{"n", 8}, {"mean_log_lambda", 1.25}}, {{"n", 32}, {"mean_log_lambda", 2.0}}}},
                      {"xi_lambda", 1.5},
                      {"xi_lambda_half_iqr", 0.125}};
  json all_ties = beyond;
  all_ties["method"] = "none";
  all_ties["pooled"] = {{"buckets", {{{"n", 8}, {"mean_log_lambda", nullptr}}}}};
  StatusOr<std::vector<std::string>> files = WriteGapCountingByLengthPlot(
      Typed<records::AttentionDiagnostics>(at_t),
      {Typed<records::AttentionDiagnostics>(beyond), Typed<records::AttentionDiagnostics>(all_ties)}, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  const std::string data = Read(dir / "gap_counting_lengths.dat");
  EXPECT_NE(data.find("# L = 8 (1x none)"), std::string::npos);
  EXPECT_NE(data.find("# L = 32 (4x dynamic_ntk)"), std::string::npos);
  EXPECT_EQ(data.find("4x none"), std::string::npos) << "a length of ties only has no curve";
  const std::string svg = Read(dir / "gap_counting_lengths.svg");
  EXPECT_NE(svg.find("1.50 ± 0.12"), std::string::npos);
  EXPECT_NE(svg.find("(4x dynamic_ntk)"), std::string::npos) << "the method's underscore is no subscript";
  StatusOr<std::vector<std::string>> nothing =
      WriteGapCountingByLengthPlot(Typed<records::AttentionDiagnostics>(all_ties), {}, options);
  ASSERT_TRUE(nothing.ok()) << nothing.status().message();
  EXPECT_TRUE(nothing->empty()) << "ties only: nothing to draw, and no error";
  fs::remove_all(dir);
}

TEST(DiagnosticsPlot, APayloadWithoutLayersIsInvalidArgument) {
  DiagnosticsPlotOptions options;
  options.out_dir = FreshDiagnosticsDir("bad").string();
  StatusOr<std::vector<std::string>> files = WriteDiagnosticsPlots(records::AttentionDiagnostics(), {}, options);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(files.status().message().find("no layer"), std::string::npos);
  EXPECT_FALSE(fs::exists(options.out_dir));  // nothing written
  EXPECT_EQ(WriteBandAblationPlot(records::BandAblationDiagnostics(), options).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::plot
