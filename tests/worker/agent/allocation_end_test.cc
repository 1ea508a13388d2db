// tests/worker/agent/allocation_end_test.cc
//
// How the worker learns when its allocation ends: the times --until and squeue write (local time,
// Z, offsets, unix seconds; squeue's words for "no end"; garbage), the SLURM lookup's decisions
// (SLURM_JOB_END_TIME first, squeue otherwise, a failing squeue only noted), squeue run for real as
// a script placed first on PATH, and the check and lines built from the end and the margin.
#include "worker/agent/allocation_end.h"

#include <time.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using std::chrono::seconds;
using testing::ScopedEnvironment;
using testing::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Central European time, with its summer time, as a POSIX TZ (no time zone database needed).
constexpr char kCentralEurope[] = "CET-1CEST,M3.5.0,M10.5.0/3";

// The process's time zone for the scope.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const std::string& zone) {
    variable_.emplace("TZ", zone);
    ::tzset();  // localtime_r reads TZ only when told to
  }
  ~ScopedTimeZone() {
    variable_.reset();
    ::tzset();
  }
  ScopedTimeZone(const ScopedTimeZone&) = delete;
  ScopedTimeZone& operator=(const ScopedTimeZone&) = delete;

 private:
  std::optional<ScopedEnvironment> variable_;
};

WallTime UnixSeconds(int64_t count) { return WallTime(seconds(count)); }

TEST(ParseWallTimeTest, ReadsLocalTimeZOffsetsAndUnixSeconds) {
  ScopedTimeZone zone(kCentralEurope);
  const struct {
    const char* text;
    int64_t unix_seconds;
  } kCases[] = {
      {"2026-12-06T14:00:00", 1796562000},        // local winter time, +01:00: as squeue prints it
      {"2026-07-01T14:00:00", 1782907200},        // local summer time, +02:00
      {"2026-12-06T13:00:00Z", 1796562000},       // UTC
      {"2026-12-06T14:00:00+01:00", 1796562000},  // an offset east
      {"2026-12-06T08:30:00-04:30", 1796562000},  // an offset west, with minutes
      {"1796562000", 1796562000},                 // unix seconds
      {"2024-02-29T00:00:00Z", 1709164800},       // a leap day
      {"0", 0},
  };
  for (const auto& one : kCases) {
    StatusOr<WallTime> time = ParseWallTime(one.text);
    ASSERT_TRUE(time.ok()) << one.text << ": " << time.status().ToString();
    EXPECT_EQ(*time, UnixSeconds(one.unix_seconds)) << one.text;
  }
}

TEST(ParseWallTimeTest, RefusesAnythingElseQuotingItAndTheFormsTaken) {
  for (const char* text : {"", "tomorrow", "2026-12-06", "2026-12-06 14:00:00", "2026-12-06T14:00",
                           "2026-13-01T00:00:00", "2026-02-29T00:00:00", "2026-04-31T00:00:00", "2026-12-06T24:00:00",
                           "2026-12-06T14:60:00", "2026-12-06T14:00:60", "2026-12-06T14:00:00+0100",
                           "2026-12-06T14:00:00+01", "2026-12-06T14:00:00+24:00", "2026-12-06T14:00:00 ",
                           "2026-12-06T14:00:00.5", "2026-12-06T14:00:00z", "2O26-12-06T14:00:00", "-5", "12.5",
                           "1e9", "99999999999", "1969-12-31T23:59:59Z", "2251-01-01T00:00:00Z"}) {
    StatusOr<WallTime> time = ParseWallTime(text);
    ASSERT_FALSE(time.ok()) << "'" << text << "' was read as a time";
    EXPECT_EQ(time.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(time.status().message(), HasSubstr("'" + std::string(text) + "' is not a time")) << text;
    EXPECT_THAT(time.status().message(), HasSubstr("YYYY-MM-DDTHH:MM:SS")) << text;
  }
}

TEST(ParseSqueueEndTimeTest, SqueuesWordsForNoEndAreNoEndAndATimeIsRead) {
  ScopedTimeZone zone(kCentralEurope);
  for (const char* line : {"N/A", "Unknown", "NONE", "INVALID", "n/a", "", "  \n"}) {
    StatusOr<std::optional<WallTime>> end = ParseSqueueEndTime(line);
    ASSERT_TRUE(end.ok()) << "'" << line << "': " << end.status().ToString();
    EXPECT_FALSE(end->has_value()) << "'" << line << "'";
  }
  StatusOr<std::optional<WallTime>> end = ParseSqueueEndTime("2026-12-06T14:00:00\n");
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(*end, UnixSeconds(1796562000));
  EXPECT_THAT(ParseSqueueEndTime("slurm_load_jobs error").status().message(), HasSubstr("is not a time"));
}

TEST(WallTimeTextTest, WritesLocalTimeWithItsOffsetAsParseWallTimeReadsIt) {
  {
    ScopedTimeZone zone(kCentralEurope);
    EXPECT_EQ(WallTimeText(UnixSeconds(1796562000)), "2026-12-06T14:00:00+01:00");
    EXPECT_EQ(WallTimeText(UnixSeconds(1782907200)), "2026-07-01T14:00:00+02:00");
  }
  {
    ScopedTimeZone zone("UTC0");
    EXPECT_EQ(WallTimeText(UnixSeconds(1796562000)), "2026-12-06T13:00:00Z");
  }
  ScopedTimeZone zone("<-0430>4:30");
  EXPECT_EQ(WallTimeText(UnixSeconds(1796562000)), "2026-12-06T08:30:00-04:30");
  EXPECT_EQ(ParseWallTime(WallTimeText(UnixSeconds(1796562000))).value(), UnixSeconds(1796562000));
}

TEST(AllocationEndFromUntilTest, NamesTheFlagAndItsValue) {
  StatusOr<AllocationEnd> end = AllocationEndFromUntil("1796562000");
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->at, UnixSeconds(1796562000));
  EXPECT_EQ(end->source, "--until 1796562000");
  EXPECT_THAT(AllocationEndFromUntil("soon").status().message(), HasSubstr("--until: 'soon' is not a time"));
}

// ------------------------------------------------------------------ the SLURM lookup's decisions

// Stands in for squeue: answers `result` and keeps what it was asked.
struct SqueueStandIn {
  StatusOr<SubprocessResult> result = SubprocessResult{};
  std::vector<SubprocessOptions> asked;
  std::vector<std::chrono::milliseconds> timeouts;

  CommandRunner Runner() {
    return [this](const SubprocessOptions& options, std::chrono::milliseconds timeout) {
      asked.push_back(options);
      timeouts.push_back(timeout);
      return result;
    };
  }
  void Prints(const std::string& stdout_text) {
    SubprocessResult printed;
    printed.stdout_text = stdout_text;
    result = printed;
  }
};

TEST(FindSlurmAllocationEndTest, OutsideSlurmThereIsNoEndAndNothingIsAsked) {
  SqueueStandIn squeue;
  SlurmAllocationLookup lookup = FindSlurmAllocationEnd({{"SLURM_JOB_END_TIME", "1796562000"}}, squeue.Runner());
  EXPECT_FALSE(lookup.end.has_value());
  EXPECT_THAT(lookup.notes, IsEmpty());
  EXPECT_THAT(squeue.asked, IsEmpty());
}

TEST(FindSlurmAllocationEndTest, SlurmJobEndTimeIsTakenWithoutAskingSqueue) {
  SqueueStandIn squeue;
  SlurmAllocationLookup lookup =
      FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_END_TIME", "1796562000"}}, squeue.Runner());
  ASSERT_TRUE(lookup.end.has_value());
  EXPECT_EQ(lookup.end->at, UnixSeconds(1796562000));
  EXPECT_EQ(lookup.end->source, "SLURM_JOB_END_TIME of SLURM job 42");
  EXPECT_THAT(lookup.notes, IsEmpty());
  EXPECT_THAT(squeue.asked, IsEmpty());
}

TEST(FindSlurmAllocationEndTest, WithoutSlurmJobEndTimeSqueueIsAskedForTheJobsEndInStandardFormat) {
  ScopedTimeZone zone(kCentralEurope);
  SqueueStandIn squeue;
  squeue.Prints("2026-12-06T14:00:00\n");
  SlurmAllocationLookup lookup =
      FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}}, squeue.Runner(), std::chrono::milliseconds(3000));
  ASSERT_TRUE(lookup.end.has_value());
  EXPECT_EQ(lookup.end->at, UnixSeconds(1796562000));
  EXPECT_EQ(lookup.end->source, "squeue for SLURM job 42");
  EXPECT_THAT(lookup.notes, IsEmpty());
  ASSERT_EQ(squeue.asked.size(), 1u);
  EXPECT_THAT(squeue.asked[0].argv, ElementsAre("squeue", "-h", "-j", "42", "-o", "%e"));
  EXPECT_THAT(squeue.asked[0].environment, ElementsAre("SLURM_TIME_FORMAT=standard"));
  EXPECT_EQ(squeue.timeouts[0], std::chrono::milliseconds(3000));
}

TEST(FindSlurmAllocationEndTest, ASlurmJobEndTimeThatIsNotUnixSecondsIsNotedAndSqueueAsked) {
  SqueueStandIn squeue;
  squeue.Prints("1796562000\n");
  SlurmAllocationLookup lookup =
      FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_END_TIME", "soon"}}, squeue.Runner());
  ASSERT_TRUE(lookup.end.has_value());
  EXPECT_EQ(lookup.end->source, "squeue for SLURM job 42");
  ASSERT_EQ(lookup.notes.size(), 1u);
  EXPECT_THAT(lookup.notes[0], HasSubstr("SLURM_JOB_END_TIME 'soon'"));
}

TEST(FindSlurmAllocationEndTest, ASqueueThatKnowsNoEndFailsOrPrintsGarbageLeavesNoEndAndOneNote) {
  SubprocessResult failed;
  failed.exit.code = 1;
  failed.stderr_text = "slurm_load_jobs error: Invalid job id specified\n";
  SubprocessResult timed_out;
  timed_out.timed_out = true;
  timed_out.exit.signal = 9;
  SubprocessResult no_end, garbage;
  no_end.stdout_text = "N/A\n";
  garbage.stdout_text = "next tuesday\n";
  const struct {
    StatusOr<SubprocessResult> result;
    const char* said;
  } kCases[] = {
      {no_end, "knows no end ('N/A')"},
      {failed, "failed (exit code 1: slurm_load_jobs error: Invalid job id specified)"},
      {timed_out, "did not answer within 5 s"},
      {garbage, "'next tuesday' is not a time"},
      {Status::FailedPrecondition("squeue: no such program in PATH"), "could not run (squeue: no such program"},
  };
  for (const auto& one : kCases) {
    SqueueStandIn squeue;
    squeue.result = one.result;
    SlurmAllocationLookup lookup = FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}}, squeue.Runner());
    EXPECT_FALSE(lookup.end.has_value()) << one.said;
    ASSERT_EQ(lookup.notes.size(), 1u) << one.said;
    EXPECT_THAT(lookup.notes[0], HasSubstr("SLURM job 42: `squeue -h -j 42 -o %e`"));
    EXPECT_THAT(lookup.notes[0], HasSubstr(one.said));
    EXPECT_THAT(lookup.notes[0], HasSubstr("this worker runs until it is signalled"));
  }
}

// ------------------------------------------------------------------ squeue as a real process

class SqueueOnPathTest : public ::testing::Test {
 protected:
  // Writes `body` as the script `squeue` in a folder of its own, which PATH then starts with.
  void PutSqueueFirstOnPath(const std::string& body) {
    std::filesystem::create_directories(scratch_.Path("bin"));
    testing::WriteScript(scratch_.Path("bin/squeue"), body);
    path_.emplace("PATH", scratch_.Path("bin") + ":" + (::getenv("PATH") ? ::getenv("PATH") : "/usr/bin:/bin"));
  }

  ScratchDir scratch_;
  std::optional<ScopedEnvironment> path_;
};

TEST_F(SqueueOnPathTest, TheJobsEndIsWhatSqueuePrintsForIt) {
  ScopedTimeZone zone(kCentralEurope);
  PutSqueueFirstOnPath(R"([ "$*" = "-h -j 42 -o %e" ] || { echo "asked: $*" >&2; exit 1; }
[ "$SLURM_TIME_FORMAT" = standard ] || { echo "format: $SLURM_TIME_FORMAT" >&2; exit 1; }
echo 2026-12-06T14:00:00
)");
  SlurmAllocationLookup lookup = FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}}, &Subprocess::Run);
  EXPECT_THAT(lookup.notes, IsEmpty());
  ASSERT_TRUE(lookup.end.has_value());
  EXPECT_EQ(lookup.end->at, UnixSeconds(1796562000));
}

TEST_F(SqueueOnPathTest, ASqueueThatHangsIsGivenUpAfterItsTimeout) {
  PutSqueueFirstOnPath("exec sleep 60\n");
  const auto started = std::chrono::steady_clock::now();
  SlurmAllocationLookup lookup =
      FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}}, &Subprocess::Run, std::chrono::milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(30));
  EXPECT_FALSE(lookup.end.has_value());
  ASSERT_EQ(lookup.notes.size(), 1u);
  EXPECT_THAT(lookup.notes[0], HasSubstr("did not answer within 0.2 s"));
}

TEST_F(SqueueOnPathTest, NoSqueueOnPathLeavesNoEndAndANote) {
  std::filesystem::create_directories(scratch_.Path("empty"));
  path_.emplace("PATH", scratch_.Path("empty"));
  SlurmAllocationLookup lookup = FindSlurmAllocationEnd({{"SLURM_JOB_ID", "42"}}, &Subprocess::Run);
  EXPECT_FALSE(lookup.end.has_value());
  ASSERT_EQ(lookup.notes.size(), 1u);
  EXPECT_THAT(lookup.notes[0], HasSubstr("could not run"));
}

// ------------------------------------------------------------------ the margin

TEST(CheckStopsAfterTest, TheStopMustBeAheadNamingTheSourceAndTheMargin) {
  ScopedTimeZone zone("UTC0");
  const AllocationEnd end{UnixSeconds(1796562000), "--until 2026-12-06T13:00:00Z"};
  const std::chrono::milliseconds margin = seconds(180);
  EXPECT_EQ(StopsAt(end, margin), UnixSeconds(1796562000 - 180));
  EXPECT_TRUE(CheckStopsAfter(end, margin, UnixSeconds(1796562000 - 181)).ok());

  const Status within = CheckStopsAfter(end, margin, UnixSeconds(1796562000 - 100));
  EXPECT_EQ(within.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(within.message(),
            "--until 2026-12-06T13:00:00Z: the allocation ends at 2026-12-06T13:00:00Z, 100 s from now: within "
            "--end-margin 180 s, the time the worker keeps to checkpoint and report before it (give a smaller one)");
  const Status past = CheckStopsAfter(end, margin, UnixSeconds(1796562000));
  EXPECT_EQ(past.message(), "--until 2026-12-06T13:00:00Z: the allocation ends at 2026-12-06T13:00:00Z, which is past");
}

TEST(DescribeStopTest, TheStartupLineAndTheShutdownReasonSayTheEndItsSourceAndTheMargin) {
  ScopedTimeZone zone(kCentralEurope);
  const AllocationEnd end{UnixSeconds(1796562000), "squeue for SLURM job 42"};
  EXPECT_EQ(DescribeStop(end, seconds(150)),
            "allocation ends at 2026-12-06T14:00:00+01:00 (squeue for SLURM job 42): stops by itself at "
            "2026-12-06T13:57:30+01:00, 150 s before");
  EXPECT_EQ(StopReason(end, seconds(150)),
            "allocation ends at 2026-12-06T14:00:00+01:00 (squeue for SLURM job 42): stopping 150 s before it");
}

}  // namespace
}  // namespace rung::agent
