// core/hf/safetensors.h
//
// Hugging Face's safetensors files, read-only and torch-free: the layout is an 8-byte little-endian
// header length N, N bytes of a JSON object, then the tensors' bytes. The object maps each tensor's
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the bytes after the header)
// and may hold "__metadata__", a map of strings.
//
// Everything in a header is checked before anything is read or allocated from it, as the reference
// implementation (the `safetensors` crate) checks it: N within the file and at most 100,000,000; the
// header a JSON object nested at most four deep; known dtypes; shapes of non-negative integers whose
// element count does not overflow; the tensors' byte ranges, in offset order, tile the data exactly
// (each begins where the previous ends, the first at 0, the last ends at the file's end) and each is
// its shape's element count times its dtype's size. Errors are INVALID_ARGUMENT (DATA_LOSS for a file
// shorter than its header says) and name the file, the byte offset and what is wrong:
//   "model.safetensors: byte 8: header: tensor 'lm_head.weight': data_offsets [0, 12] hold 12 bytes
//    where its shape [2, 3] in F32 needs 24".
//
// Example:
//   StatusOr<SafetensorsFile> file = SafetensorsFile::Open("model.safetensors");
//   if (!file.ok()) ...;
//   const SafetensorsTensor* weight = file->Find("lm_head.weight");
//   const unsigned char* bytes = file->Data(*weight);   // weight->bytes() bytes, in the file's mapping
//
// Thread safety: an opened file is immutable; any thread may read it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/data/shard_mappings.h"

namespace rung::hf {

// The dtypes of the safetensors format, by their names there.
enum class SafetensorsDtype { kBool, kU8, kI8, kF8E5M2, kF8E4M3, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

const char* SafetensorsDtypeName(SafetensorsDtype dtype);  // "BF16", ...
int64_t SafetensorsDtypeBytes(SafetensorsDtype dtype);     // 1, 2, 4 or 8

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  int64_t begin = 0;  // offsets into the data that follows the header
  int64_t end = 0;
  int64_t bytes() const { return end - begin; }
  int64_t elements() const;
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;  // in offset order
  std::map<std::string, std::string> metadata;
  int64_t data_offset = 0;  // where the data begins in the file: 8 + N
};

// The header of a whole file image `file` (header length, header, data); `source` names it in
// messages. Checks everything above.
StatusOr<SafetensorsHeader> ParseSafetensors(std::string_view file, const std::string& source);

class SafetensorsFile {
 public:
  // Maps the file and parses its header. Errors: NOT_FOUND when it cannot be opened; ParseSafetensors'.
  static StatusOr<SafetensorsFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<SafetensorsTensor>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // The tensor of that name, or null.
  const SafetensorsTensor* Find(const std::string& name) const;
  // The first of the tensor's bytes in the mapping. REQUIRES: `tensor` is one of tensors().
  const unsigned char* Data(const SafetensorsTensor& tensor) const;
  // Lets the kernel drop the tensor's pages from memory (they are read from the file again if touched):
  // a reader that has copied a tensor keeps its memory at one copy of the weights, not two.
  void ReleasePages(const SafetensorsTensor& tensor) const;

 private:
  std::string path_;
  std::shared_ptr<const ShardMappings::Mapping> mapping_;
  SafetensorsHeader header_;
  std::map<std::string, size_t> by_name_;
};

// Writes a safetensors file (tests and export): tensors in the order given, their bytes as given,
// offsets laid end to end; the header padded with spaces to a multiple of 8 bytes as the reference
// writer does. REQUIRES: each tensor's bytes match its shape and dtype.
struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::string SafetensorsImage(const std::vector<SafetensorsEntry>& entries,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace rung::hf
