// fuzz/records_fuzzer.cc
//
// libFuzzer target: the trainer-record codec (core/records/trainer_records.h). The input is one
// line as a trainer would print it. Whatever DecodeRecord accepts must survive a round trip:
// EncodeRecord of it decodes again, to a record of the same type that encodes to the same line
// (the encoded form is compared rather than the structs: a NaN is a NaN on both sides). Any other
// outcome of DecodeRecord is fine as long as it is an error value, not a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/records/trainer_records.h"

namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "records_fuzzer: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rung::records::DecodeRecord;
  using rung::records::EncodeRecord;
  using rung::records::RecordType;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  rung::StatusOr<rung::records::TrainerRecord> decoded = DecodeRecord(line);
  if (!decoded.ok()) {
    if (decoded.status().code() != rung::StatusCode::kInvalidArgument) {
      Fail("DecodeRecord failed with a code other than INVALID_ARGUMENT", decoded.status().ToString());
    }
    return 0;
  }
  const std::string once = EncodeRecord(*decoded);
  rung::StatusOr<rung::records::TrainerRecord> again = DecodeRecord(once);
  if (!again.ok()) {
    Fail("a decoded record re-encodes to a line that does not decode", once + "\n" + again.status().ToString());
  }
  if (RecordType(*again) != RecordType(*decoded)) Fail("the round trip changed the record type", once);
  const std::string twice = EncodeRecord(*again);
  if (twice != once) Fail("the round trip changed the record", once + "\n" + twice);
  return 0;
}
