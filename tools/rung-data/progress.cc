#include "tools/rung-data/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace rung::data_tool {

ProgressReporter::ProgressReporter(std::string what, int64_t total_bytes)
    : what_(std::move(what)),
      total_(total_bytes > 0 ? total_bytes : 1),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {
  reporter_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) Report(false);
  });
}

ProgressReporter::~ProgressReporter() { Finish(); }

void ProgressReporter::Finish() {
  if (!reporter_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  reporter_.join();
  Report(true);
}

void ProgressReporter::Report(bool final_line) {
  const int64_t done = done_.load(std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;  // bytes/s
  const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r%s [%s] %5.1f%% %7.2f MB/s ETA %4.0fs%s", what_.c_str(), bar.c_str(), 100.0 * fraction,
                 rate / 1e6, eta, final_line ? "\n" : "");
    std::fflush(stderr);
    return;
  }
  if (!final_line && fraction * 10 < next_tenth_) return;
  while (next_tenth_ <= fraction * 10) ++next_tenth_;
  std::fprintf(stderr, "%s: %.0f%% (%lld of %lld bytes, %.2f MB/s, ETA %.0f s)\n", what_.c_str(), 100.0 * fraction,
               static_cast<long long>(done), static_cast<long long>(total_), rate / 1e6, eta);
}

}  // namespace rung::data_tool
