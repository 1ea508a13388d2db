// fuzz/safetensors_fuzzer.cc: a safetensors file image as core/hf/safetensors.h parses it (header
// length, header JSON, the tensors' ranges against the data). Whatever the bytes, the parse returns a
// status and never reads past the image; a header it accepts has ranges that tile the data exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/hf/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  rung::StatusOr<rung::hf::SafetensorsHeader> header = rung::hf::ParseSafetensors(image, "fuzz.safetensors");
  if (!header.ok()) return 0;
  int64_t end = 0;
  for (const rung::hf::SafetensorsTensor& tensor : header->tensors) {
    if (tensor.begin != end || tensor.bytes() != tensor.elements() * rung::hf::SafetensorsDtypeBytes(tensor.dtype)) {
      std::abort();
    }
    end = tensor.end;
  }
  if (header->data_offset + end != static_cast<int64_t>(size)) std::abort();
  return 0;
}
