#include "core/common/blas_kernel_startup.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/common/blas_kernel_cache.h"
#include "core/common/blas_kernel_choice.h"
#include "core/common/blas_sgemm_check.h"
#include "core/common/cpu_features.h"
#include "core/common/provenance.h"
#include "core/common/subprocess.h"
#include "core/common/utc_time.h"

namespace rung {
namespace {

constexpr const char* kProbeVariable = "RUNG_BLAS_KERNEL_PROBE";
constexpr const char* kChosenVariable = "RUNG_BLAS_KERNEL_CHOSEN";
constexpr const char* kReplacedVariable = "RUNG_BLAS_KERNEL_REPLACED";
constexpr const char* kReasonVariable = "RUNG_BLAS_KERNEL_REASON";
constexpr const char* kNotesVariable = "RUNG_BLAS_KERNEL_NOTES";
constexpr auto kProbeTimeout = std::chrono::seconds(60);

using CoreNameFn = char* (*)();

BlasKernelReport& MutableReport() {
  static BlasKernelReport report;
  return report;
}

bool& ChoiceRan() {
  static bool ran = false;
  return ran;
}

// OpenBLAS's kernel name, when OpenBLAS is the BLAS this process calls.
CoreNameFn OpenBlasCoreName() { return reinterpret_cast<CoreNameFn>(BlasSymbol("openblas_get_corename")); }

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The processor and the OpenBLAS build (its file, size and time): what a verdict depends on.
std::string CacheKey(const CpuFeatures& cpu, CoreNameFn core_name) {
  std::string key = "cpu=" + cpu.Describe();
  const std::string path = SharedObjectPath(reinterpret_cast<void*>(core_name));
  if (!path.empty()) {
    struct stat status {};
    key += ";openblas=" + path;
    if (::stat(path.c_str(), &status) == 0) {
      key += ";size=" + std::to_string(status.st_size) + ";mtime=" + std::to_string(status.st_mtime);
    }
  }
  return key;
}

// Probe mode: report the core OpenBLAS runs and check sgemm, then exit (0 passed, 1 not).
[[noreturn]] void RunProbe(const std::string& kernel, CoreNameFn core_name) {
  const std::string ran = core_name != nullptr ? core_name() : "";
  const std::string fault = Environment("RUNG_BLAS_KERNEL_TEST_FAULT");
  const size_t colon = fault.rfind(':');
  const bool faulty = colon != std::string::npos && SameKernelName(fault.substr(0, colon), kernel);
  if (faulty && fault.substr(colon + 1) == "crash") {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  const SgemmCheckResult result = CheckSgemm(faulty && fault.substr(colon + 1) == "wrong");
  std::printf("%s\t%d\t%s\n", ran.c_str(), result.passed ? 1 : 0, result.Describe().c_str());
  std::fflush(stdout);
  _exit(result.passed ? 0 : 1);
}

// Runs this program in probe mode with OPENBLAS_CORETYPE=kernel.
KernelVerdict Probe(const std::string& kernel, const std::string& program) {
  KernelVerdict verdict;
  verdict.kernel = kernel;
  SubprocessOptions options;
  options.argv = {program};
  options.environment = {std::string(kProbeVariable) + "=" + kernel, "OPENBLAS_CORETYPE=" + kernel};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> run = Subprocess::Run(options, kProbeTimeout);
  if (!run.ok()) {
    verdict.outcome = KernelVerdict::Outcome::kCrashed;
    verdict.detail = "the check could not start: " + run.status().message();
    return verdict;
  }
  if (run->timed_out) {
    verdict.outcome = KernelVerdict::Outcome::kCrashed;
    verdict.detail = "the check did not finish in " + std::to_string(kProbeTimeout.count()) + " s";
    return verdict;
  }
  // The report: "RAN<tab>PASSED<tab>DETAIL" on the last line.
  const std::vector<std::string> lines = SplitLines(run->stdout_text);
  const std::string report = lines.empty() ? "" : lines.back();
  const size_t first_tab = report.find('\t');
  const size_t second_tab = first_tab == std::string::npos ? std::string::npos : report.find('\t', first_tab + 1);
  std::vector<std::string> fields;
  if (second_tab != std::string::npos) {
    fields = {report.substr(0, first_tab), report.substr(first_tab + 1, second_tab - first_tab - 1),
              report.substr(second_tab + 1)};
  }
  if (run->exit.signal != 0 || fields.size() != 3) {
    verdict.outcome = KernelVerdict::Outcome::kCrashed;
    verdict.detail = "the check's process " + run->exit.Describe() + " before it reported";
    return verdict;
  }
  verdict.ran = fields[0];
  verdict.detail = fields[2];
  if (!SameKernelName(verdict.ran, kernel)) {
    verdict.outcome = KernelVerdict::Outcome::kUnavailable;
    verdict.detail = "this OpenBLAS has no " + kernel + " kernel (asked for it, it ran " + verdict.ran + ")";
  } else {
    verdict.outcome = fields[1] == "1" && run->exit.Succeeded() ? KernelVerdict::Outcome::kPassed
                                                                 : KernelVerdict::Outcome::kWrong;
  }
  return verdict;
}

// This program's file ("" when /proc/self/exe cannot be read).
std::string ProgramPath() {
  char program[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", program, sizeof(program) - 1);
  if (length <= 0) return "";
  program[length] = '\0';
  return program;
}

bool Failed(const KernelVerdict& verdict) {
  return verdict.outcome == KernelVerdict::Outcome::kWrong || verdict.outcome == KernelVerdict::Outcome::kCrashed;
}

std::string FailureNote(const KernelVerdict& verdict) {
  return "kernel " + verdict.kernel + " failed its check in a child process (" + verdict.detail + ")";
}

// Step 4 of the header: the candidates' verdicts (cached or checked now), then execv with the first
// that passed. Returns when OpenBLAS's choice stands.
void ChooseOrKeep(char** argv, const std::string& current, CoreNameFn core_name) {
  BlasKernelReport& report = MutableReport();
  const CpuFeatures cpu = DetectCpuFeatures();
  const KernelPlan plan = PlanKernelChoice(cpu, current);
  report.reason = plan.reason;
  if (plan.keep) return;

  const std::string program = ProgramPath();
  if (program.empty()) {
    report.notes.push_back("cannot find this program (/proc/self/exe) to check other kernels: kept OpenBLAS's");
    return;
  }

  const std::string cache_path = BlasKernelCachePath();
  const std::string key = CacheKey(cpu, core_name);
  std::vector<KernelVerdict> known = ReadKernelVerdicts(cache_path, key);
  std::vector<KernelVerdict> verdicts;
  bool checked_now = false;
  std::string chosen;
  for (const std::string& kernel : plan.to_try) {
    KernelVerdict verdict;
    auto cached = std::find_if(known.begin(), known.end(), [&](const KernelVerdict& v) { return SameKernelName(v.kernel, kernel); });
    if (cached != known.end()) {
      verdict = *cached;
    } else {
      verdict = Probe(kernel, program);
      checked_now = true;
      if (Failed(verdict)) std::fprintf(stderr, "rung: BLAS %s; trying the next\n", FailureNote(verdict).c_str());
    }
    if (Failed(verdict)) report.notes.push_back(FailureNote(verdict));
    verdicts.push_back(verdict);
    if (verdict.outcome == KernelVerdict::Outcome::kPassed) {
      chosen = kernel;
      break;
    }
  }
  if (checked_now) {
    for (const KernelVerdict& old : known) {
      if (std::none_of(verdicts.begin(), verdicts.end(), [&](const KernelVerdict& v) { return SameKernelName(v.kernel, old.kernel); })) {
        verdicts.push_back(old);
      }
    }
    const Status written = WriteKernelVerdicts(cache_path, key, UtcNow(), verdicts);
    if (!written.ok()) report.notes.push_back("the kernel checks are not cached (" + written.message() + "): every start checks again");
  }
  if (chosen.empty()) {
    report.reason = plan.reason + "; no later kernel passed its check, so OpenBLAS's stands";
    return;
  }
  std::string notes;
  for (const std::string& note : report.notes) notes += note + "\n";
  ::setenv("OPENBLAS_CORETYPE", chosen.c_str(), 1);
  ::setenv(kChosenVariable, chosen.c_str(), 1);
  ::setenv(kReplacedVariable, current.c_str(), 1);
  ::setenv(kReasonVariable, plan.reason.c_str(), 1);
  ::setenv(kNotesVariable, notes.c_str(), 1);
  ::execv(program.c_str(), argv);
  const int error = errno;
  for (const char* name : {"OPENBLAS_CORETYPE", kChosenVariable, kReplacedVariable, kReasonVariable, kNotesVariable}) {
    ::unsetenv(name);
  }
  report.notes.push_back("cannot execute " + program + " again with kernel " + chosen + ": " +
                         std::strerror(error) + "; kept OpenBLAS's");
}

}  // namespace

const char* BlasKernelSourceName(BlasKernelSource source) {
  switch (source) {
    case BlasKernelSource::kNotChosen: return "not-chosen";
    case BlasKernelSource::kNotOpenBlas: return "not-openblas";
    case BlasKernelSource::kOpenBlas: return "openblas";
    case BlasKernelSource::kRung: return "rung";
    case BlasKernelSource::kEnvironment: return "environment";
    case BlasKernelSource::kKept: return "kept";
  }
  return "not-chosen";
}

std::string BlasKernelReport::Describe() const {
  std::string text;
  switch (source) {
    case BlasKernelSource::kNotChosen:
      text = kernel.empty() ? "kernel not chosen (this program does not choose)"
                            : "kernel " + kernel + " (this program does not choose)";
      break;
    case BlasKernelSource::kNotOpenBlas:
      text = "not OpenBLAS: rung did not choose its kernel";
      break;
    case BlasKernelSource::kOpenBlas:
      text = "kernel " + kernel + " (" + reason + ")";
      break;
    case BlasKernelSource::kRung:
      text = "kernel " + kernel + " (chosen by rung; " + reason + ")";
      break;
    case BlasKernelSource::kEnvironment:
      text = "kernel " + kernel + " (set by the environment: OPENBLAS_CORETYPE=" + environment +
             (SameKernelName(environment, kernel) ? ")" : ", which this OpenBLAS does not know: it runs " + kernel + ")");
      break;
    case BlasKernelSource::kKept:
      text = "kernel " + kernel + " (RUNG_BLAS_KERNEL=keep: OpenBLAS's own choice, not checked by rung)";
      break;
  }
  for (const std::string& note : notes) text += "; " + note;
  return text;
}

nlohmann::json BlasKernelReport::ToJson() const {
  return {{"name", kernel},          {"source", BlasKernelSourceName(source)}, {"openblas_choice", openblas_choice},
          {"environment", environment}, {"reason", reason},                     {"notes", notes}};
}

void ChooseBlasKernelAtStart(char** argv) {
  ChoiceRan() = true;
  BlasKernelReport& report = MutableReport();
  const CoreNameFn core_name = OpenBlasCoreName();
  const std::string probe = Environment(kProbeVariable);
  if (!probe.empty()) RunProbe(probe, core_name);

  report.library = DetectBlas().library_path;
  if (core_name == nullptr) {
    report.source = BlasKernelSource::kNotOpenBlas;
    report.reason = report.library.empty() ? "no BLAS is loaded" : report.library + " is not OpenBLAS";
    return;
  }
  const std::string current = core_name();
  report.kernel = current;
  const std::string coretype = Environment("OPENBLAS_CORETYPE");
  const std::string chosen = Environment(kChosenVariable);
  if (!chosen.empty() && chosen == coretype) {
    report.source = BlasKernelSource::kRung;
    report.openblas_choice = Environment(kReplacedVariable);
    report.reason = Environment(kReasonVariable);
    report.notes = SplitLines(Environment(kNotesVariable));
    if (!SameKernelName(current, chosen)) report.notes.push_back("rung asked for " + chosen + " but OpenBLAS runs " + current);
    return;
  }
  // The tests' seam: start as if OpenBLAS had chosen RUNG_BLAS_KERNEL_TEST_START by itself (a core
  // older than this processor's, as on a processor OpenBLAS does not know).
  const std::string test_start = Environment("RUNG_BLAS_KERNEL_TEST_START");
  if (!test_start.empty() && std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    const std::string program = ProgramPath();
    ::setenv("OPENBLAS_CORETYPE", test_start.c_str(), 1);
    if (!program.empty()) ::execv(program.c_str(), argv);
    ::unsetenv("OPENBLAS_CORETYPE");
    report.notes.push_back("RUNG_BLAS_KERNEL_TEST_START: cannot execute this program again");
  }
  const bool test_started = !test_start.empty() && coretype == test_start;
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr && !test_started) {
    report.source = BlasKernelSource::kEnvironment;
    report.environment = coretype;
    report.reason = "OPENBLAS_CORETYPE is the user's";
    return;
  }
  const std::string mode = Environment("RUNG_BLAS_KERNEL");
  if (mode == "keep") {
    report.source = BlasKernelSource::kKept;
    report.reason = "RUNG_BLAS_KERNEL=keep";
    return;
  }
  report.source = BlasKernelSource::kOpenBlas;
  if (!mode.empty() && mode != "auto") {
    report.notes.push_back("RUNG_BLAS_KERNEL=" + mode + " is neither auto nor keep: chose as auto");
  }
  ChooseOrKeep(argv, current, core_name);
}

const BlasKernelReport& StartupBlasKernel() {
  if (!ChoiceRan()) {
    static const bool filled = [] {
      BlasKernelReport& report = MutableReport();
      report.library = DetectBlas().library_path;
      if (CoreNameFn core_name = OpenBlasCoreName(); core_name != nullptr) report.kernel = core_name();
      return true;
    }();
    (void)filled;
  }
  return MutableReport();
}

}  // namespace rung
