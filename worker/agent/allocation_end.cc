// worker/agent/allocation_end.cc
#include "worker/agent/allocation_end.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include "core/common/trim_whitespace.h"
#include "worker/agent/log.h"

extern char** environ;

namespace rung::agent {
namespace {

// The latest time taken: 2250-12-31T23:59:59Z (system_clock's nanoseconds reach 2262).
constexpr int64_t kLatestUnixSeconds = 8867491199;

bool AllDigits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The number text[at, at + count) writes in decimal; -1 unless all of it is digits.
int DigitsAt(const std::string& text, size_t at, size_t count) {
  if (at > text.size()) return -1;
  const std::string digits = text.substr(at, count);
  if (digits.size() != count || !AllDigits(digits)) return -1;
  return std::atoi(digits.c_str());
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

std::string FirstLine(const std::string& text) { return std::string(TrimWhitespace(text.substr(0, text.find('\n')))); }

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// "allocation ends at 2026-12-06T14:00:00+01:00 (squeue for SLURM job 42)"
std::string EndsAt(const AllocationEnd& end) {
  return "allocation ends at " + WallTimeText(end.at) + " (" + end.source + ")";
}

}  // namespace

StatusOr<WallTime> ParseWallTime(const std::string& text) {
  const auto bad = [&text](const std::string& why) {
    return Status::InvalidArgument("'" + text + "' is not a time (" + why +
                                   "): give YYYY-MM-DDTHH:MM:SS in local time (as squeue -o %e prints it), "
                                   "optionally with Z or an offset such as +01:00, or unix seconds");
  };
  int64_t seconds = 0;
  if (AllDigits(text)) {
    if (text.size() > 12 || std::stoll(text) > kLatestUnixSeconds) return bad("after 2250");
    seconds = std::stoll(text);
  } else {
    if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
        text[16] != ':') {
      return bad("not of the form YYYY-MM-DDTHH:MM:SS");
    }
    const int year = DigitsAt(text, 0, 4), month = DigitsAt(text, 5, 2), day = DigitsAt(text, 8, 2);
    const int hour = DigitsAt(text, 11, 2), minute = DigitsAt(text, 14, 2), second = DigitsAt(text, 17, 2);
    if (std::min({year, month, day, hour, minute, second}) < 0) return bad("not of the form YYYY-MM-DDTHH:MM:SS");
    if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) return bad("no such date");
    if (hour > 23 || minute > 59 || second > 59) return bad("no such time of day");
    std::tm fields{};
    fields.tm_year = year - 1900;
    fields.tm_mon = month - 1;
    fields.tm_mday = day;
    fields.tm_hour = hour;
    fields.tm_min = minute;
    fields.tm_sec = second;
    const std::string zone = text.substr(19);
    if (zone.empty()) {
      fields.tm_isdst = -1;  // whichever is in force then
      const std::time_t local = std::mktime(&fields);
      if (local == static_cast<std::time_t>(-1)) return bad("not a local time here");
      seconds = local;
    } else {
      int offset = 0;
      if (zone != "Z") {
        const int offset_hours = DigitsAt(zone, 1, 2), offset_minutes = DigitsAt(zone, 4, 2);
        if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' || offset_hours < 0 ||
            offset_minutes < 0) {
          return bad("what follows the seconds is neither Z nor an offset +HH:MM or -HH:MM");
        }
        if (offset_hours > 23 || offset_minutes > 59) return bad("no such offset");
        offset = (zone[0] == '-' ? -1 : 1) * (offset_hours * 3600 + offset_minutes * 60);
      }
      seconds = static_cast<int64_t>(::timegm(&fields)) - offset;
    }
    if (seconds < 0) return bad("before 1970");
    if (seconds > kLatestUnixSeconds) return bad("after 2250");
  }
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

StatusOr<std::optional<WallTime>> ParseSqueueEndTime(const std::string& line) {
  const std::string text(TrimWhitespace(line));
  const std::string lower = Lowercase(text);
  if (lower.empty() || lower == "n/a" || lower == "unknown" || lower == "none" || lower == "invalid") {
    return std::optional<WallTime>();
  }
  RUNG_ASSIGN_OR_RETURN(WallTime time, ParseWallTime(text));
  return std::optional<WallTime>(time);
}

std::string WallTimeText(WallTime time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &local);
  if (local.tm_gmtoff == 0) return std::string(text) + "Z";
  const int offset_minutes = static_cast<int>(std::labs(local.tm_gmtoff) / 60) % (24 * 60);
  char offset[16];
  std::snprintf(offset, sizeof(offset), "%c%02d:%02d", local.tm_gmtoff < 0 ? '-' : '+', offset_minutes / 60,
                offset_minutes % 60);
  return std::string(text) + offset;
}

StatusOr<AllocationEnd> AllocationEndFromUntil(const std::string& text) {
  StatusOr<WallTime> at = ParseWallTime(text);
  if (!at.ok()) return Status::InvalidArgument("--until: " + at.status().message());
  return AllocationEnd{*at, "--until " + text};
}

Environment ThisProcessEnvironment() {
  Environment environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals != std::string::npos) environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

SlurmAllocationLookup FindSlurmAllocationEnd(const Environment& environment, const CommandRunner& run,
                                             std::chrono::milliseconds timeout) {
  SlurmAllocationLookup lookup;
  const auto job_id = environment.find("SLURM_JOB_ID");
  if (job_id == environment.end() || job_id->second.empty()) return lookup;
  const std::string job = "SLURM job " + job_id->second;
  if (const auto end_time = environment.find("SLURM_JOB_END_TIME");
      end_time != environment.end() && !end_time->second.empty()) {
    StatusOr<WallTime> at = ParseWallTime(end_time->second);
    if (AllDigits(end_time->second) && at.ok() && at->time_since_epoch().count() > 0) {
      lookup.end = AllocationEnd{*at, "SLURM_JOB_END_TIME of " + job};
      return lookup;
    }
    lookup.notes.push_back(job + ": SLURM_JOB_END_TIME '" + end_time->second +
                           "' is not an end in unix seconds; asking squeue");
  }

  SubprocessOptions options;
  options.argv = {"squeue", "-h", "-j", job_id->second, "-o", "%e"};
  options.environment = {"SLURM_TIME_FORMAT=standard"};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  const std::string command = "`squeue -h -j " + job_id->second + " -o %e`";
  const std::string no_end = "; no allocation end known: this worker runs until it is signalled";
  StatusOr<SubprocessResult> result = run(options, timeout);
  if (!result.ok()) {
    lookup.notes.push_back(job + ": " + command + " could not run (" + result.status().message() + ")" + no_end);
  } else if (result->timed_out) {
    lookup.notes.push_back(job + ": " + command + " did not answer within " + SecondsText(timeout) + no_end);
  } else if (!result->exit.Succeeded()) {
    const std::string said = FirstLine(result->stderr_text);
    lookup.notes.push_back(job + ": " + command + " failed (" + result->exit.Describe() +
                           (said.empty() ? "" : ": " + said) + ")" + no_end);
  } else {
    const std::string line = FirstLine(result->stdout_text);
    StatusOr<std::optional<WallTime>> at = ParseSqueueEndTime(line);
    if (!at.ok()) {
      lookup.notes.push_back(job + ": " + command + ": " + at.status().message() + no_end);
    } else if (!at->has_value()) {
      lookup.notes.push_back(job + ": " + command + " knows no end ('" + line + "')" + no_end);
    } else {
      lookup.end = AllocationEnd{**at, "squeue for " + job};
    }
  }
  return lookup;
}

WallTime StopsAt(const AllocationEnd& end, std::chrono::milliseconds margin) { return end.at - margin; }

Status CheckStopsAfter(const AllocationEnd& end, std::chrono::milliseconds margin, WallTime now) {
  if (StopsAt(end, margin) > now) return Status::Ok();
  const std::string ends = end.source + ": the allocation ends at " + WallTimeText(end.at);
  if (end.at <= now) return Status::InvalidArgument(ends + ", which is past");
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(end.at - now);
  return Status::InvalidArgument(ends + ", " + SecondsText(left) + " from now: within --end-margin " +
                                 SecondsText(margin) +
                                 ", the time the worker keeps to checkpoint and report before it (give a smaller one)");
}

std::string DescribeStop(const AllocationEnd& end, std::chrono::milliseconds margin) {
  return EndsAt(end) + ": stops by itself at " + WallTimeText(StopsAt(end, margin)) + ", " + SecondsText(margin) +
         " before";
}

std::string StopReason(const AllocationEnd& end, std::chrono::milliseconds margin) {
  return EndsAt(end) + ": stopping " + SecondsText(margin) + " before it";
}

}  // namespace rung::agent
