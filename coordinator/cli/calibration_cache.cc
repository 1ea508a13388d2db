#include "coordinator/cli/calibration_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/cache_entries_file.h"
#include "core/common/provenance.h"
#include "core/common/user_cache_folder.h"

namespace rung::cli {
namespace {

using nlohmann::json;

// The point at `index` of an entry, or a warning and nullopt when a field is missing, of the wrong
// type or out of range.
std::optional<CalibrationPoint> ParsePoint(const json& value, const std::string& where, std::vector<std::string>* warnings) {
  auto number = [&](const char* field) -> std::optional<double> {
    if (!value.is_object() || !value.contains(field) || !value[field].is_number()) return std::nullopt;
    const double number = value[field].get<double>();
    if (!std::isfinite(number) || number < 0) return std::nullopt;
    return number;
  };
  const std::optional<double> per_token = number("flops_per_token"), rate = number("flops_per_sec"),
                              fixed = number("seconds_per_trial");
  if (!per_token || !rate || !fixed || *per_token <= 0 || *rate <= 0 || *fixed > 1e7) {
    warnings->push_back(where + ": not a point {flops_per_token > 0, flops_per_sec > 0, seconds_per_trial >= 0}: " +
                        value.dump().substr(0, 120));
    return std::nullopt;
  }
  CalibrationPoint point;
  point.flops_per_token = *per_token;
  point.flops_per_sec = *rate;
  point.seconds_per_trial = *fixed;
  if (value.contains("shape") && value["shape"].is_string()) point.shape = value["shape"].get<std::string>();
  return point;
}

// The cache's entries, or an empty array with a warning when the file is unusable.
json ReadEntries(const std::string& path, std::vector<std::string>* warnings) {
  StatusOr<json> entries = ReadCacheEntries(path, "calibration");
  if (entries.ok()) return *entries;
  if (entries.status().code() != StatusCode::kNotFound) {
    warnings->push_back("ignoring the calibration cache " + path + ": " + entries.status().message());
  }
  return json::array();
}

}  // namespace

double Calibration::Seconds(double flops_per_token, double flops) const {
  // Interpolated in ln(FLOPs per token) between the nearest points; the nearest one outside them.
  auto at = [&](auto field) {
    if (flops_per_token <= points.front().flops_per_token) return points.front().*field;
    if (flops_per_token >= points.back().flops_per_token) return points.back().*field;
    for (size_t i = 1; i < points.size(); ++i) {
      if (flops_per_token > points[i].flops_per_token) continue;
      const double x0 = std::log(points[i - 1].flops_per_token), x1 = std::log(points[i].flops_per_token);
      const double t = x1 > x0 ? (std::log(flops_per_token) - x0) / (x1 - x0) : 0.0;
      return points[i - 1].*field + t * (points[i].*field - points[i - 1].*field);
    }
    return points.back().*field;
  };
  return flops / at(&CalibrationPoint::flops_per_sec) + at(&CalibrationPoint::seconds_per_trial);
}

std::string CalibrationCachePath() {
  const std::string folder = UserCacheFolder();
  return folder.empty() ? "" : folder + "/calibration.json";
}

std::string CalibrationKey(int threads) {
  return "host=" + HostName() + ";cores=" + std::to_string(std::thread::hardware_concurrency()) +
         ";threads=" + std::to_string(threads) + ";build=" + BuildCommit();
}

std::optional<Calibration> ReadCalibration(const std::string& path, const std::string& key,
                                           std::vector<std::string>* warnings) {
  const json entries = ReadEntries(path, warnings);
  for (size_t index = 0; index < entries.size(); ++index) {
    const json& entry = entries[index];
    if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) {
      warnings->push_back("calibration cache " + path + ": entry " + std::to_string(index) + " has no key; ignored");
      continue;
    }
    if (entry["key"].get<std::string>() != key) continue;
    Calibration calibration;
    calibration.key = key;
    if (entry.contains("measured_at") && entry["measured_at"].is_string()) {
      calibration.measured_at = entry["measured_at"].get<std::string>();
    }
    if (entry.contains("blas_kernel") && entry["blas_kernel"].is_string()) {
      calibration.blas_kernel = entry["blas_kernel"].get<std::string>();
    }
    const json& points = entry.value("points", json());
    if (!points.is_array()) {
      warnings->push_back("calibration cache " + path + ": entry " + std::to_string(index) + " has no points; ignored");
      return std::nullopt;
    }
    for (size_t p = 0; p < points.size(); ++p) {
      const std::string where = "calibration cache " + path + ": entry " + std::to_string(index) + " point " + std::to_string(p);
      if (std::optional<CalibrationPoint> point = ParsePoint(points[p], where, warnings)) {
        calibration.points.push_back(*point);
      }
    }
    if (calibration.points.empty()) return std::nullopt;
    std::sort(calibration.points.begin(), calibration.points.end(),
              [](const CalibrationPoint& a, const CalibrationPoint& b) { return a.flops_per_token < b.flops_per_token; });
    return calibration;
  }
  return std::nullopt;
}

Status WriteCalibration(const std::string& path, const Calibration& calibration, std::vector<std::string>* warnings) {
  if (path.empty()) return Status::InvalidArgument("no cache folder: set XDG_CACHE_HOME or HOME");
  std::vector<CalibrationPoint> points = calibration.points;
  std::optional<Calibration> cached = ReadCalibration(path, calibration.key, warnings);
  if (cached && cached->blas_kernel == calibration.blas_kernel) {
    for (const CalibrationPoint& old : cached->points) {
      const bool measured_again = std::any_of(points.begin(), points.end(), [&](const CalibrationPoint& point) {
        return std::fabs(point.flops_per_token / old.flops_per_token - 1) < 1e-9;
      });
      if (!measured_again) points.push_back(old);
    }
  }
  json entries = json::array();
  for (const json& entry : ReadEntries(path, warnings)) {
    if (entry.is_object() && entry.contains("key") && entry["key"].is_string() &&
        entry["key"].get<std::string>() != calibration.key) {
      entries.push_back(entry);
    }
  }
  json point_list = json::array();
  for (const CalibrationPoint& point : points) {
    point_list.push_back({{"shape", point.shape},
                          {"flops_per_token", point.flops_per_token},
                          {"flops_per_sec", point.flops_per_sec},
                          {"seconds_per_trial", point.seconds_per_trial}});
  }
  entries.push_back({{"key", calibration.key},
                     {"measured_at", calibration.measured_at},
                     {"blas_kernel", calibration.blas_kernel},
                     {"points", point_list}});
  // The contract above says INVALID_ARGUMENT for a cache that cannot be written.
  if (Status written = WriteCacheEntries(path, entries); !written.ok()) return Status::InvalidArgument(written.message());
  return Status::Ok();
}

}  // namespace rung::cli
