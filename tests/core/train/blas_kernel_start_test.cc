// rung's BLAS kernel choice at start (core/common/blas_kernel_startup.h), through real rung-train
// processes: `rung-train --blas-kernel` and short training runs, each with a cache folder of its own.
// Where OpenBLAS already runs the best kernel for this processor nothing is replaced, and the tests
// of the replacement say so and skip.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/blas_kernel_choice.h"
#include "core/common/cpu_features.h"
#include "core/common/subprocess.h"
#include "tests/core/data/test_files.h"


namespace rung {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// A fresh cache folder (XDG_CACHE_HOME), removed at the end.
class CacheFolder {
 public:
  const std::string& path() const { return folder_.path(); }
  std::string cache_file() const { return folder_ / "rung/blas-kernel.json"; }

 private:
  data_test::TempFolder folder_;
};

struct TrainerRun {
  ExitStatus exit;
  std::string out, err;
};

// rung-train with `args`, in this environment less any BLAS kernel setting, plus `variables`.
TrainerRun Trainer(const std::vector<std::string>& args, const CacheFolder& cache, const std::vector<std::string>& variables) {
  SubprocessOptions options;
  options.argv = {RUNG_TRAIN_BINARY};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.clear_environment = true;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string variable = *entry;
    if (variable.rfind("OPENBLAS_CORETYPE=", 0) == 0 || variable.rfind("RUNG_BLAS_KERNEL", 0) == 0 ||
        variable.rfind("XDG_CACHE_HOME=", 0) == 0) {
      continue;
    }
    options.environment.push_back(variable);
  }
  options.environment.push_back("XDG_CACHE_HOME=" + cache.path());
  options.environment.insert(options.environment.end(), variables.begin(), variables.end());
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> result = Subprocess::Run(options, std::chrono::minutes(10));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {};
  return {result->exit, result->stdout_text, result->stderr_text};
}

// `rung-train --blas-kernel`'s JSON line.
json BlasKernel(const CacheFolder& cache, const std::vector<std::string>& variables, std::string* err = nullptr) {
  const TrainerRun run = Trainer({"--blas-kernel"}, cache, variables);
  EXPECT_TRUE(run.exit.Succeeded()) << run.exit.Describe() << "\n" << run.err;
  if (err != nullptr) *err = run.err;
  json blas = json::parse(run.out, nullptr, false);
  EXPECT_TRUE(blas.is_object()) << run.out;
  return blas.is_object() ? blas : json::object();
}

// What OpenBLAS runs by itself here, and rung's plan for it.
struct Machine {
  std::string openblas;
  KernelPlan plan;
};

Machine ThisMachine() {
  CacheFolder cache;
  const json kept = BlasKernel(cache, {"RUNG_BLAS_KERNEL=keep"});
  Machine machine;
  machine.openblas = kept.value("/kernel/name"_json_pointer, "");
  machine.plan = PlanKernelChoice(DetectCpuFeatures(), machine.openblas);
  return machine;
}

// The seam that starts a program on Prescott as if OpenBLAS had chosen it (as Debian's OpenBLAS does
// on processors it does not know), so that the replacement runs on any machine with AVX.
const std::string kStartOnPrescott = "RUNG_BLAS_KERNEL_TEST_START=Prescott";

// The plan for a start on Prescott; skips the test on a processor without a later kernel.
#define SKIP_WITHOUT_A_LATER_KERNEL_THAN_PRESCOTT()                                                       \
  if (PlanKernelChoice(DetectCpuFeatures(), "Prescott").keep) {                                           \
    GTEST_SKIP() << "no kernel later than Prescott for this processor: "                                  \
                 << PlanKernelChoice(DetectCpuFeatures(), "Prescott").reason;                             \
  }

std::string TinyTrialConfig() {
  const json config = {{"seed", 1},
                       {"data", {{"source", "builtin"}, {"seq_len", 32}}},
                       {"model", {{"layers", 1}, {"d_model", 32}, {"heads", 2}}},
                       {"position", {{"variant", "rope"}}},
                       {"train", {{"steps", 20}, {"batch_size", 4}, {"eval_every", 20}, {"eval_batches", 1}, {"log_every", 10}}},
                       {"resources", {{"cpus", 1}}}};
  const std::string path = testing::TempDir() + "/blas_kernel_trial.json";
  std::ofstream(path) << config.dump();
  return path;
}

json Provenance(const std::string& out) {
  const json first = json::parse(out.substr(0, out.find('\n')), nullptr, false);
  EXPECT_TRUE(first.is_object() && first.value("type", "") == "provenance") << out.substr(0, 200);
  return first.is_object() ? first : json::object();
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(BlasKernelStartTest, OpenBlasIsFoundAndKeepMeansItsOwnChoice) {
  CacheFolder cache;
  const json kept = BlasKernel(cache, {"RUNG_BLAS_KERNEL=keep"});
  EXPECT_EQ(kept["kernel"]["source"], "kept");
  EXPECT_NE(kept["kernel"]["name"], "");
  EXPECT_THAT(kept["describe"].get<std::string>(), HasSubstr("RUNG_BLAS_KERNEL=keep"));
  EXPECT_FALSE(fs::exists(cache.cache_file()));
}

TEST(BlasKernelStartTest, ADefaultStartRunsTheBestKernelGenerationThisProcessorHas) {
  const Machine machine = ThisMachine();
  CacheFolder cache;
  const json blas = BlasKernel(cache, {});
  const std::string kernel = blas["kernel"]["name"];
  if (DetectCpuFeatures().avx2) {
    EXPECT_GE(KernelGeneration(kernel), 3) << "a generic kernel on a processor with AVX2";
  }
  if (machine.plan.keep) {
    EXPECT_EQ(blas["kernel"]["source"], "openblas");
    EXPECT_EQ(kernel, machine.openblas);
    EXPECT_EQ(blas["kernel"]["reason"], machine.plan.reason);
    EXPECT_FALSE(fs::exists(cache.cache_file())) << "nothing to check, nothing cached";
  } else {
    EXPECT_EQ(blas["kernel"]["source"], "rung") << blas.dump();
    EXPECT_EQ(blas["kernel"]["openblas_choice"], machine.openblas);
    EXPECT_GT(KernelGeneration(kernel), KernelGeneration(machine.openblas));
  }
}

TEST(BlasKernelStartTest, AStartOnAnOlderKernelIsExecutedAgainOnTheBestThatPassesItsCheck) {
  SKIP_WITHOUT_A_LATER_KERNEL_THAN_PRESCOTT();
  const KernelPlan plan = PlanKernelChoice(DetectCpuFeatures(), "Prescott");
  CacheFolder cache;
  std::string err;
  const json blas = BlasKernel(cache, {kStartOnPrescott}, &err);
  const std::string kernel = blas["kernel"]["name"];
  EXPECT_EQ(blas["kernel"]["source"], "rung") << blas.dump();
  EXPECT_EQ(kernel, plan.to_try.front()) << "the best candidate, unless its check failed: " << err;
  EXPECT_EQ(blas["kernel"]["openblas_choice"], "Prescott");
  EXPECT_EQ(blas["kernel"]["reason"], plan.reason);
  EXPECT_THAT(blas["config"].get<std::string>(), HasSubstr(" " + kernel + " "));  // OpenBLAS's own words
  EXPECT_EQ(blas["describe"], "kernel " + kernel + " (chosen by rung; " + plan.reason + ")");
  ASSERT_TRUE(fs::exists(cache.cache_file()));
  std::ifstream file(cache.cache_file());
  EXPECT_THAT(json::parse(file).dump(), HasSubstr("\"kernel\":\"" + kernel + "\",\"outcome\":\"passed\""));
}

TEST(BlasKernelStartTest, TheVerdictsAreCachedSoALaterStartChecksNothing) {
  SKIP_WITHOUT_A_LATER_KERNEL_THAN_PRESCOTT();
  CacheFolder cache;
  const std::string kernel = BlasKernel(cache, {kStartOnPrescott})["kernel"]["name"];
  ASSERT_TRUE(fs::exists(cache.cache_file()));
  // A check of that kernel would now crash: the second start must not run one.
  std::string err;
  const json again = BlasKernel(cache, {kStartOnPrescott, "RUNG_BLAS_KERNEL_TEST_FAULT=" + kernel + ":crash"}, &err);
  EXPECT_EQ(again["kernel"]["name"], kernel);
  EXPECT_EQ(again["kernel"]["source"], "rung");
  EXPECT_THAT(err, Not(HasSubstr("failed its check")));
}

void ExpectAFailedCheckIsSkipped(const std::string& mode, const std::string& words) {
  SKIP_WITHOUT_A_LATER_KERNEL_THAN_PRESCOTT();
  const KernelPlan plan = PlanKernelChoice(DetectCpuFeatures(), "Prescott");
  const std::string best = plan.to_try.front();
  CacheFolder cache;
  std::string err;
  const json blas = BlasKernel(cache, {kStartOnPrescott, "RUNG_BLAS_KERNEL_TEST_FAULT=" + best + ":" + mode}, &err);
  EXPECT_THAT(err, HasSubstr("rung: BLAS kernel " + best + " failed its check in a child process (" + words));
  const std::string kernel = blas["kernel"]["name"];
  EXPECT_NE(kernel, best);
  if (plan.to_try.size() > 1) {
    EXPECT_EQ(kernel, plan.to_try[1]) << "the next candidate";
    EXPECT_EQ(blas["kernel"]["source"], "rung");
  }
  EXPECT_THAT(blas["kernel"]["notes"].dump(), HasSubstr("kernel " + best + " failed its check"));
  EXPECT_THAT(blas["describe"].get<std::string>(), HasSubstr(words));
  std::ifstream file(cache.cache_file());
  EXPECT_THAT(json::parse(file).dump(), HasSubstr("\"kernel\":\"" + best + "\",\"outcome\":\"" +
                                                  (mode == "crash" ? "crashed" : "wrong") + "\""));
}

TEST(BlasKernelStartTest, AKernelWhoseCheckCrashesIsSkippedAndSaidSo) {
  ExpectAFailedCheckIsSkipped("crash", "the check's process killed by signal 11");
}

TEST(BlasKernelStartTest, AKernelWithWrongNumbersIsSkippedAndSaidSo) {
  ExpectAFailedCheckIsSkipped("wrong", "sgemm differs from a plain loop");
}

TEST(BlasKernelStartTest, TheUsersOpenblasCoretypeWins) {
  CacheFolder cache;
  const json blas = BlasKernel(cache, {"OPENBLAS_CORETYPE=Haswell"});
  EXPECT_EQ(blas["kernel"]["name"], "Haswell");
  EXPECT_EQ(blas["kernel"]["source"], "environment");
  EXPECT_EQ(blas["describe"], "kernel Haswell (set by the environment: OPENBLAS_CORETYPE=Haswell)");
  EXPECT_FALSE(fs::exists(cache.cache_file()));
}

TEST(BlasKernelStartTest, AnOpenblasCoretypeOpenBlasDoesNotKnowIsReportedWithWhatItRuns) {
  CacheFolder cache;
  const json blas = BlasKernel(cache, {"OPENBLAS_CORETYPE=NoSuchCore"});
  const std::string kernel = blas["kernel"]["name"];
  EXPECT_EQ(blas["kernel"]["source"], "environment");
  EXPECT_EQ(blas["describe"], "kernel " + kernel +
                                  " (set by the environment: OPENBLAS_CORETYPE=NoSuchCore, which this OpenBLAS does "
                                  "not know: it runs " + kernel + ")");
}

TEST(BlasKernelStartTest, AnUnknownRungBlasKernelValueIsSaidAndChoosesAsAuto) {
  CacheFolder cache;
  const json blas = BlasKernel(cache, {"RUNG_BLAS_KERNEL=fastest"});
  EXPECT_THAT(blas["kernel"]["notes"].dump(), HasSubstr("RUNG_BLAS_KERNEL=fastest is neither auto nor keep"));
  EXPECT_NE(blas["kernel"]["source"], "kept");
}

TEST(BlasKernelStartTest, ABlasThatIsNotOpenBlasIsNamedAndLeftAlone) {
  // Debian's reference BLAS (libblas3) first on the library path: LibTorch calls it, while OpenBLAS is
  // still loaded for LAPACK.
  const std::string folder = "/usr/lib/x86_64-linux-gnu/blas";
  if (!fs::exists(folder + "/libblas.so.3")) GTEST_SKIP() << "no reference BLAS at " << folder << " (libblas3)";
  CacheFolder cache;
  const json blas = BlasKernel(cache, {"LD_LIBRARY_PATH=" + folder});
  EXPECT_EQ(blas["kernel"]["source"], "not-openblas");
  EXPECT_EQ(blas["kernel"]["name"], "");
  EXPECT_EQ(blas["describe"], "not OpenBLAS: rung did not choose its kernel");
  EXPECT_THAT(blas["library"].get<std::string>(), HasSubstr("/blas/libblas.so.3"));
  EXPECT_EQ(blas["optimized"], false);
  EXPECT_FALSE(fs::exists(cache.cache_file()));
}

TEST(BlasKernelStartTest, TrainingNamesItsKernelFirstAndRecordsItInTheProvenance) {
  CacheFolder cache;
  const std::string kernel = BlasKernel(cache, {})["kernel"]["name"];
  const TrainerRun run = Trainer({"--config", TinyTrialConfig()}, cache, {});
  ASSERT_TRUE(run.exit.Succeeded()) << run.err;
  EXPECT_THAT(FirstLine(run.err), HasSubstr(", kernel " + kernel + " ("));
  const json provenance = Provenance(run.out);
  EXPECT_EQ(provenance["blas"]["kernel"]["name"], kernel);
  EXPECT_THAT(run.out, HasSubstr("\"type\":\"final\""));
}

TEST(BlasKernelStartTest, TrainingStartedOnAnOlderKernelTrainsOnTheChosenOne) {
  SKIP_WITHOUT_A_LATER_KERNEL_THAN_PRESCOTT();
  CacheFolder cache;
  const TrainerRun run = Trainer({"--config", TinyTrialConfig()}, cache, {kStartOnPrescott});
  ASSERT_TRUE(run.exit.Succeeded()) << run.err;
  const json provenance = Provenance(run.out);
  EXPECT_EQ(provenance["blas"]["kernel"]["source"], "rung");
  EXPECT_EQ(provenance["blas"]["kernel"]["openblas_choice"], "Prescott");
  EXPECT_NE(provenance["blas"]["kernel"]["name"], "Prescott");
  EXPECT_THAT(FirstLine(run.err), HasSubstr("(chosen by rung; OpenBLAS chose Prescott (SSE)"));
  EXPECT_THAT(run.out, HasSubstr("\"type\":\"final\""));
}

TEST(BlasKernelStartTest, TrainingOnAKernelTheEnvironmentSetsSaysSoAndTrains) {
  CacheFolder cache;
  const TrainerRun run = Trainer({"--config", TinyTrialConfig()}, cache, {"OPENBLAS_CORETYPE=Haswell"});
  ASSERT_TRUE(run.exit.Succeeded()) << run.err;
  EXPECT_THAT(FirstLine(run.err), HasSubstr("kernel Haswell (set by the environment: OPENBLAS_CORETYPE=Haswell)"));
  const json provenance = Provenance(run.out);
  EXPECT_EQ(provenance["blas"]["kernel"]["source"], "environment");
  EXPECT_THAT(run.out, HasSubstr("\"type\":\"final\""));
}

}  // namespace
}  // namespace rung
