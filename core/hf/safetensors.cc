#include "core/hf/safetensors.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

namespace rung::hf {
namespace {

using nlohmann::json;

// The reference implementation's limit on the header.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// The format's header nests three deep ({name: {shape: [...]}}); a deeper one is refused unparsed.
constexpr int kMaxHeaderDepth = 4;
// Element counts and byte counts stay below 2^62.
constexpr int64_t kMaxCount = int64_t{1} << 62;

struct DtypeInfo {
  SafetensorsDtype dtype;
  const char* name;
  int64_t bytes;
};
constexpr DtypeInfo kDtypes[] = {
    {SafetensorsDtype::kBool, "BOOL", 1},     {SafetensorsDtype::kU8, "U8", 1},
    {SafetensorsDtype::kI8, "I8", 1},         {SafetensorsDtype::kF8E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::kF8E4M3, "F8_E4M3", 1}, {SafetensorsDtype::kI16, "I16", 2},
    {SafetensorsDtype::kU16, "U16", 2},       {SafetensorsDtype::kF16, "F16", 2},
    {SafetensorsDtype::kBF16, "BF16", 2},     {SafetensorsDtype::kI32, "I32", 4},
    {SafetensorsDtype::kU32, "U32", 4},       {SafetensorsDtype::kF32, "F32", 4},
    {SafetensorsDtype::kF64, "F64", 8},       {SafetensorsDtype::kI64, "I64", 8},
    {SafetensorsDtype::kU64, "U64", 8},
};

const DtypeInfo& InfoOf(SafetensorsDtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  return kDtypes[0];
}

std::string Location(const std::string& source, uint64_t byte) {
  return source + ": byte " + std::to_string(byte) + ": ";
}

// The first byte (from 0) at which `header` opens a bracket deeper than kMaxHeaderDepth, outside
// strings; npos when none does.
size_t TooDeepAt(std::string_view header) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < header.size(); ++i) {
    const char c = header[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxHeaderDepth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::string_view::npos;
}

// A non-negative integer of the header, or false.
bool Count(const json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

// One entry of the header, with its shape and offsets checked on their own (not yet against the others).
StatusOr<SafetensorsTensor> ParseEntry(const std::string& name, const json& entry, const std::string& where) {
  const std::string tensor = where + "tensor '" + name + "': ";
  if (!entry.is_object()) return Status::InvalidArgument(tensor + "is not an object with dtype, shape and data_offsets");
  SafetensorsTensor out;
  out.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) return Status::InvalidArgument(tensor + "has no dtype string");
  const std::string dtype_name = dtype->get<std::string>();
  const auto known = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                  [&](const DtypeInfo& info) { return dtype_name == info.name; });
  if (known == std::end(kDtypes)) {
    std::string names;
    for (const DtypeInfo& info : kDtypes) names += (names.empty() ? "" : ", ") + std::string(info.name);
    return Status::InvalidArgument(tensor + "unknown dtype '" + dtype_name + "' (the format's: " + names + ")");
  }
  out.dtype = known->dtype;
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) return Status::InvalidArgument(tensor + "has no shape array");
  int64_t elements = 1;
  for (const json& dimension : *shape) {
    uint64_t size = 0;
    if (!Count(dimension, &size)) {
      return Status::InvalidArgument(tensor + "shape " + shape->dump() + " holds something not a non-negative integer");
    }
    if (size > static_cast<uint64_t>(kMaxCount) ||
        (size > 0 && elements > kMaxCount / static_cast<int64_t>(size))) {
      return Status::InvalidArgument(tensor + "shape " + shape->dump() + " has more than 2^62 elements");
    }
    elements *= static_cast<int64_t>(size);
    out.shape.push_back(static_cast<int64_t>(size));
  }
  if (elements > kMaxCount / known->bytes) {
    return Status::InvalidArgument(tensor + "shape " + shape->dump() + " needs more than 2^62 bytes");
  }
  const auto offsets = entry.find("data_offsets");
  uint64_t begin = 0, end = 0;
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !Count((*offsets)[0], &begin) ||
      !Count((*offsets)[1], &end)) {
    return Status::InvalidArgument(tensor + "data_offsets is not [begin, end] of non-negative integers");
  }
  if (begin > static_cast<uint64_t>(kMaxCount) || end > static_cast<uint64_t>(kMaxCount) || end < begin) {
    return Status::InvalidArgument(tensor + "data_offsets " + offsets->dump() + " is not a range");
  }
  out.begin = static_cast<int64_t>(begin);
  out.end = static_cast<int64_t>(end);
  if (out.bytes() != elements * known->bytes) {
    return Status::InvalidArgument(tensor + "data_offsets " + offsets->dump() + " hold " + std::to_string(out.bytes()) +
                                   " bytes where its shape " + shape->dump() + " in " + known->name + " needs " +
                                   std::to_string(elements * known->bytes));
  }
  return out;
}

}  // namespace

const char* SafetensorsDtypeName(SafetensorsDtype dtype) { return InfoOf(dtype).name; }
int64_t SafetensorsDtypeBytes(SafetensorsDtype dtype) { return InfoOf(dtype).bytes; }

int64_t SafetensorsTensor::elements() const {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

StatusOr<SafetensorsHeader> ParseSafetensors(std::string_view file, const std::string& source) {
  if (file.size() < 8) {
    return Status::InvalidArgument(Location(source, 0) + "the file has " + std::to_string(file.size()) +
                                   " bytes, fewer than the 8 of a safetensors header length");
  }
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  if (length > kMaxHeaderBytes) {
    return Status::InvalidArgument(Location(source, 0) + "header length " + std::to_string(length) +
                                   " is more than the format's 100000000 (not a safetensors file?)");
  }
  if (length > file.size() - 8) {
    return Status::DataLoss(Location(source, 0) + "header length " + std::to_string(length) + " runs past the end of the " +
                            std::to_string(file.size()) + "-byte file (truncated?)");
  }
  const std::string_view text = file.substr(8, length);
  if (text.empty() || text[0] != '{') {
    return Status::InvalidArgument(Location(source, 8) + "the header is not a JSON object");
  }
  if (size_t deep = TooDeepAt(text); deep != std::string_view::npos) {
    return Status::InvalidArgument(Location(source, 8 + deep) + "the header nests deeper than the format's " +
                                   std::to_string(kMaxHeaderDepth) + " levels");
  }
  json header;
  try {
    header = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& error) {
    const uint64_t at = error.byte > 0 ? error.byte - 1 : 0;
    return Status::InvalidArgument(Location(source, 8 + at) + "the header is not valid JSON: " + error.what());
  } catch (const json::exception& error) {  // a number past a double's range (out_of_range.406): no byte
    return Status::InvalidArgument(Location(source, 8) + "the header is not valid JSON: " + error.what());
  }
  if (!header.is_object()) return Status::InvalidArgument(Location(source, 8) + "the header is not a JSON object");
  SafetensorsHeader out;
  out.data_offset = static_cast<int64_t>(8 + length);
  const std::string where = Location(source, 8) + "header: ";
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return Status::InvalidArgument(where + "__metadata__ is not an object of strings");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return Status::InvalidArgument(where + "__metadata__ '" + key + "' is not a string");
        }
        out.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    RUNG_ASSIGN_OR_RETURN(SafetensorsTensor tensor, ParseEntry(name, entry, where));
    out.tensors.push_back(std::move(tensor));
  }
  std::stable_sort(out.tensors.begin(), out.tensors.end(),
                   [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.begin < b.begin; });
  const int64_t data_bytes = static_cast<int64_t>(file.size()) - out.data_offset;
  int64_t expected = 0;
  for (const SafetensorsTensor& tensor : out.tensors) {
    if (tensor.begin != expected) {
      return Status::InvalidArgument(Location(source, static_cast<uint64_t>(out.data_offset + std::min(tensor.begin, expected))) +
                                     "tensor '" + tensor.name + "' begins at data byte " + std::to_string(tensor.begin) +
                                     " where the tensors before it end at " + std::to_string(expected) +
                                     (tensor.begin < expected ? " (overlap)" : " (a hole)"));
    }
    expected = tensor.end;
    if (expected > data_bytes) {
      return Status::DataLoss(Location(source, static_cast<uint64_t>(out.data_offset + tensor.begin)) + "tensor '" +
                              tensor.name + "' ends at data byte " + std::to_string(tensor.end) + " past the file's " +
                              std::to_string(data_bytes) + " bytes of data (truncated?)");
    }
  }
  if (expected != data_bytes) {
    return Status::InvalidArgument(Location(source, static_cast<uint64_t>(out.data_offset + expected)) +
                                   "the tensors' data ends at data byte " + std::to_string(expected) + " but the file holds " +
                                   std::to_string(data_bytes) + " bytes of data");
  }
  return out;
}

StatusOr<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ShardMappings::Mapping> mapping, ShardMappings::Map(path));
  const std::string_view image(reinterpret_cast<const char*>(mapping->data), static_cast<size_t>(mapping->bytes));
  RUNG_ASSIGN_OR_RETURN(SafetensorsHeader header, ParseSafetensors(image, path));
  SafetensorsFile file;
  file.path_ = path;
  file.mapping_ = std::move(mapping);
  file.header_ = std::move(header);
  for (size_t i = 0; i < file.header_.tensors.size(); ++i) file.by_name_[file.header_.tensors[i].name] = i;
  return file;
}

const SafetensorsTensor* SafetensorsFile::Find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

const unsigned char* SafetensorsFile::Data(const SafetensorsTensor& tensor) const {
  return mapping_->data + header_.data_offset + tensor.begin;
}

void SafetensorsFile::ReleasePages(const SafetensorsTensor& tensor) const {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(Data(tensor));
  const uintptr_t first = (begin + page - 1) / page * page;  // the whole pages inside the tensor's bytes
  const uintptr_t last = (begin + static_cast<uintptr_t>(tensor.bytes())) / page * page;
  // A read-only private file mapping: dropped pages read the file again if touched (advice only).
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

std::string SafetensorsImage(const std::vector<SafetensorsEntry>& entries,
                             const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  int64_t offset = 0;
  std::string data;
  for (const SafetensorsEntry& entry : entries) {
    header[entry.name] = {{"dtype", SafetensorsDtypeName(entry.dtype)},
                          {"shape", entry.shape},
                          {"data_offsets", {offset, offset + static_cast<int64_t>(entry.bytes.size())}}};
    offset += static_cast<int64_t>(entry.bytes.size());
    data += entry.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t length = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  return out + text + data;
}

}  // namespace rung::hf
