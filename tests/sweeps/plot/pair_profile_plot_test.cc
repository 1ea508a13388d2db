#include "sweeps/plot/pair_profile_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

// An attention payload with profiles: two layers of three heads, 2 pairs x 4 distance bins, the last
// bin of layer 1 reached by no visible pair (NaN).
records::AttentionDiagnostics ProfileRecord() {
  records::AttentionDiagnostics attention;
  for (int64_t layer = 0; layer < 2; ++layer) {
    records::AttentionLayer& entry = attention.layers.emplace_back();
    entry.layer = layer;
    entry.pair_profile_edges = {0, 1, 4, 16, 64};
    for (int64_t head = 0; head < 3; ++head) {
      const double last = layer == 1 ? std::nan("") : -0.1 * static_cast<double>(head);
      records::AttentionHead& profile = entry.heads.emplace_back();
      profile.head = head;
      profile.pair_profile = {{0.5, 0.2, -0.3, last}, {0.1, 0.1, 0.05, last}};
    }
  }
  return attention;
}

TEST(PairProfilePlot, DrawsOneFigureALayerWithAPanelAHeadAndBlankUnreachedBins) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  }
  const fs::path dir = plot_testing::FreshDir("rung_pair_profile_plot_test_", "layers");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 3: adarope";
  StatusOr<std::vector<std::string>> files = WritePairProfilePlots(ProfileRecord(), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 4u);
  for (const std::string& file : *files) EXPECT_GT(fs::file_size(file), 1000u) << file;
  EXPECT_TRUE(fs::exists(dir / "pair_profile_L1.png"));
  const std::string data = plot_testing::Read(dir / "pair_profile_L1_h2.dat");
  EXPECT_EQ(data, "0.5 0.2 -0.3 NaN\n0.1 0.1 0.05 NaN\n");
  const std::string script = plot_testing::Read(dir / "pair_profile.gp");
  EXPECT_NE(script.find("set cbrange [-0.5:0.5]"), std::string::npos) << "symmetric about 0 over the layer";
  EXPECT_NE(script.find("multiplot layout 2,2"), std::string::npos) << "three heads on a 2 x 2 grid";
}

TEST(PairProfilePlot, ARecordWithoutProfilesIsInvalidArgumentSayingWhy) {
  DiagnosticsPlotOptions options;
  options.out_dir = plot_testing::FreshDir("rung_pair_profile_plot_test_", "none").string();
  records::AttentionDiagnostics record = ProfileRecord();
  for (records::AttentionLayer& layer : record.layers) layer.pair_profile_edges.clear();
  StatusOr<std::vector<std::string>> files = WritePairProfilePlots(record, options);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("diagnostics_pair_profile_bins"), std::string::npos);
  EXPECT_FALSE(WritePairProfilePlots(records::AttentionDiagnostics(), options).ok());
}

}  // namespace
}  // namespace rung::plot
