// tools/rung-data/progress.h
//
// Progress of a long pass over bytes, on stderr: a bar redrawn in place with the share done, MB/s and
// the ETA when stderr is a terminal; otherwise a plain line at every tenth of the work (logs stay readable).
//
// Example:
//   ProgressReporter progress("encode", total_bytes);   // starts reporting
//   ... progress.Add(bytes) from any thread ...
//   progress.Finish();                                   // the final line; stops the reporter
//
// Thread safety: Add may be called from any thread; construction and Finish from one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace rung::data_tool {

class ProgressReporter {
 public:
  ProgressReporter(std::string what, int64_t total_bytes);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void Add(int64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }
  void Finish();

 private:
  void Report(bool final_line);

  std::string what_;
  int64_t total_;
  bool terminal_;
  int next_tenth_ = 1;
  std::atomic<int64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread reporter_;
};

}  // namespace rung::data_tool
