// core/config/json_binding.h
//
// Binds config structs to JSON once, for both directions: a Visit function names each field, and
// JsonFieldReader (strict parse, collects ConfigErrors with key paths, rejects unknown keys with a
// suggestion, and holds every number to the range its consumer has: core/config/config_number_range.h) or JsonFieldWriter (emits every field) walks it. Internal to core/config.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config_error.h"
#include "core/config/config_number_range.h"

namespace rung {

class JsonFieldReader {
 public:
  JsonFieldReader(const nlohmann::json* object, std::string path, std::vector<ConfigError>* errors)
      : object_(object), path_(std::move(path)), errors_(errors) {
    if (object_ != nullptr && !object_->is_object()) {
      Error(path_.empty() ? "(top level)" : path_, "expected a mapping, got " + TypeName(*object_));
      object_ = nullptr;
    }
  }

  void Field(const char* key, int64_t& out) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    std::string problem;
    if (IntegerOf(*value, &out, &problem)) return;
    NumberError(Join(key), problem);
  }
  void Field(const char* key, uint64_t& out) {
    int64_t signed_value = static_cast<int64_t>(out);
    size_t before = errors_->size();
    Field(key, signed_value);
    if (errors_->size() != before) return;
    if (signed_value < 0) {
      Error(Join(key), "must be >= 0");
      return;
    }
    out = static_cast<uint64_t>(signed_value);
  }
  void Field(const char* key, double& out) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    std::string problem;
    if (RealOf(*value, &out, &problem)) return;
    (value->is_number() ? NumberError(Join(key), problem) : Error(Join(key), problem));
  }
  void Field(const char* key, bool& out) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_boolean()) {
      Error(Join(key), "expected true or false, got " + TypeName(*value));
      return;
    }
    out = value->get<bool>();
  }
  void Field(const char* key, std::string& out) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_string()) {
      Error(Join(key), "expected a string, got " + TypeName(*value));
      return;
    }
    out = value->get<std::string>();
  }
  void Field(const char* key, std::vector<int64_t>& out) { ListField(key, out, &IntegerOf, "integers"); }
  void Field(const char* key, std::vector<double>& out) { ListField(key, out, &RealOf, "numbers"); }
  // A list of strings, each one of `allowed`.
  void EnumList(const char* key, std::vector<std::string>& out, std::initializer_list<const char*> allowed) {
    EnumList(key, out, std::vector<std::string>(allowed.begin(), allowed.end()));
  }
  // The same with a registry's names (length_extension_method.h), in its listing order.
  void EnumList(const char* key, std::vector<std::string>& out, const std::vector<std::string>& options) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_array()) {
      Error(Join(key), "expected a list, got " + TypeName(*value));
      return;
    }
    out.clear();
    for (const nlohmann::json& item : *value) {
      if (!item.is_string() || std::find(options.begin(), options.end(), item.get<std::string>()) == options.end()) {
        std::string list;
        for (const std::string& option : options) list += (list.empty() ? "" : ", ") + option;
        Error(Join(key), "elements must be one of: " + list + "; got " + item.dump());
        return;
      }
      out.push_back(item.get<std::string>());
    }
  }
  // One of `allowed`; the error lists them ("'x' is not one of: a, b (did you mean 'a'?)").
  void Enum(const char* key, std::string& out, std::initializer_list<const char*> allowed) {
    OneOf(key, out, std::vector<std::string>(allowed.begin(), allowed.end()), "", "");
  }
  // One of a registry's names (positional_variant.h). The error names the kind and where the list is
  // ("'ropey' is not a positional variant (did you mean 'rope'?); rung validate --help lists them"),
  // not the names: a registry grows, and the words stay.
  void RegistryName(const char* key, std::string& out, const std::vector<std::string>& options, const std::string& kind,
                    const std::string& listed_by) {
    OneOf(key, out, options, kind, "; " + listed_by + " lists them");
  }
  template <typename Visit>
  void Block(const char* key, Visit&& visit) {
    const nlohmann::json* value = Take(key);
    JsonFieldReader child(value, Join(key), errors_);
    child.number_errors_ = number_errors_;
    visit(child);
    child.Finish();
  }
  // Reports keys that no Field/Block consumed.
  void Finish() {
    if (object_ == nullptr) return;
    std::vector<std::string> known(seen_.begin(), seen_.end());
    for (auto it = object_->begin(); it != object_->end(); ++it) {
      if (seen_.count(it.key())) continue;
      std::string message = "unknown key";
      std::string nearest = NearestKey(it.key(), known);
      if (!nearest.empty()) message += " (did you mean '" + nearest + "'?)";
      Error(Join(it.key()), message);
    }
  }
  // Marks keys as known without reading them (handled elsewhere).
  void Allow(const char* key) { seen_.insert(key); }
  // Whether every error this reader (and its blocks) reported is a number its key cannot hold: each
  // such key keeps its default, so the config can still be validated as a whole and every error
  // reported at once.
  bool OnlyNumberErrors() const { return *number_errors_ == errors_->size() - errors_before_; }

 private:
  // Reads `key` as a string that must be one of `options`: else "'X' is not KIND" (KIND "": "one of:
  // " and the options), the nearest option, and `after`.
  void OneOf(const char* key, std::string& out, const std::vector<std::string>& options, const std::string& kind,
             const std::string& after) {
    size_t before = errors_->size();
    Field(key, out);
    if (errors_->size() != before || object_ == nullptr || !object_->contains(key)) return;
    if (std::find(options.begin(), options.end(), out) != options.end()) return;
    std::string what = kind;
    if (what.empty()) {
      what = "one of: ";
      for (size_t i = 0; i < options.size(); ++i) what += (i == 0 ? "" : ", ") + options[i];
    }
    std::string message = "'" + out + "' is not " + what;
    std::string nearest = NearestKey(out, options);
    if (!nearest.empty()) message += " (did you mean '" + nearest + "'?)";
    Error(Join(key), message + after);
  }

  // An int64 count: an integer, or a float with an integral value written in exponent form (1e6).
  static bool IntegerOf(const nlohmann::json& value, int64_t* out, std::string* problem) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      *problem = value.dump() + " is outside int64's range (at most 9223372036854775807)";
      return false;
    }
    if (value.is_number_integer()) {
      *out = value.get<int64_t>();
      return true;
    }
    if (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>()) {
      if (std::fabs(value.get<double>()) < 9e15) {
        *out = static_cast<int64_t>(value.get<double>());  // 1e6 in YAML/JSON
        return true;
      }
      *problem = value.dump() + (std::fabs(value.get<double>()) < 9.2e18
                                     ? " is too large for an integer written as a float: write its digits"
                                     : " is outside int64's range (at most 9223372036854775807)");
      return false;
    }
    *problem = "expected an integer, got " + TypeName(value);
    return false;
  }
  // A real held as float32 by rung-train (ConfigRealRangeProblem).
  static bool RealOf(const nlohmann::json& value, double* out, std::string* problem) {
    if (!value.is_number()) {
      *problem = "expected a number, got " + TypeName(value);
      return false;
    }
    *problem = ConfigRealRangeProblem(value.get<double>());
    if (!problem->empty()) return false;
    *out = value.get<double>();
    return true;
  }

  // A list whose every element `convert` accepts (named `what` in errors: "integers", "numbers").
  template <typename T>
  void ListField(const char* key, std::vector<T>& out, bool (*convert)(const nlohmann::json&, T*, std::string*),
                 const char* what) {
    const nlohmann::json* value = Take(key);
    if (value == nullptr) return;
    if (!value->is_array()) {
      Error(Join(key), std::string("expected a list of ") + what + ", got " + TypeName(*value));
      return;
    }
    out.clear();
    for (size_t index = 0; index < value->size(); ++index) {
      T item{};
      std::string problem;
      if (!convert((*value)[index], &item, &problem)) {
        const std::string path = Join(key) + "[" + std::to_string(index) + "]";
        ((*value)[index].is_number() ? NumberError(path, problem) : Error(path, problem));
        return;
      }
      out.push_back(item);
    }
  }

  const nlohmann::json* Take(const char* key) {
    seen_.insert(key);
    if (object_ == nullptr) return nullptr;
    auto it = object_->find(key);
    if (it == object_->end() || it->is_null()) return nullptr;
    return &*it;
  }
  std::string Join(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  void Error(const std::string& path, const std::string& message) { errors_->push_back({path, message}); }
  void NumberError(const std::string& path, const std::string& message) {
    ++*number_errors_;
    Error(path, message);
  }
  static std::string TypeName(const nlohmann::json& value) {
    if (value.is_string()) return "the string \"" + value.get<std::string>() + "\"";
    if (value.is_array()) return "a list";
    if (value.is_object()) return "a mapping";
    return std::string(value.type_name()) + " " + value.dump();
  }

  const nlohmann::json* object_;
  std::string path_;
  std::vector<ConfigError>* errors_;
  size_t errors_before_ = errors_->size();
  std::shared_ptr<size_t> number_errors_ = std::make_shared<size_t>(0);  // shared with child blocks
  std::set<std::string> seen_;
};

class JsonFieldWriter {
 public:
  explicit JsonFieldWriter(nlohmann::json* object) : object_(object) { *object_ = nlohmann::json::object(); }

  template <typename T>
  void Field(const char* key, const T& value) { (*object_)[key] = value; }
  void Enum(const char* key, const std::string& value, std::initializer_list<const char*>) {
    (*object_)[key] = value;
  }
  void RegistryName(const char* key, const std::string& value, const std::vector<std::string>&, const std::string&,
                    const std::string&) {
    (*object_)[key] = value;
  }
  void EnumList(const char* key, const std::vector<std::string>& value, std::initializer_list<const char*>) {
    (*object_)[key] = value;
  }
  void EnumList(const char* key, const std::vector<std::string>& value, const std::vector<std::string>&) {
    (*object_)[key] = value;
  }
  template <typename Visit>
  void Block(const char* key, Visit&& visit) {
    JsonFieldWriter child(&(*object_)[key]);
    visit(child);
  }
  void Allow(const char*) {}
  void Finish() {}

 private:
  nlohmann::json* object_;
};

}  // namespace rung
