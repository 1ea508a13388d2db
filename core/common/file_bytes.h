// core/common/file_bytes.h
//
// A whole file's bytes, for the readers that take a file at once (byte corpora, rung-data's inputs and
// tokenizer models).
//
// Example:
//   std::string text;
//   RUNG_RETURN_IF_ERROR(ReadFileBytes(path, "input", &text));   // "cannot open input PATH"
//
// Thread safety: reentrant.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace rung {

// Replaces *out with the bytes of `path`. `what` names the file's role in the errors ("input",
// "tokenizer"; empty for none). Errors: NOT_FOUND "cannot open <what> <path>" when it cannot be opened;
// DATA_LOSS "read error in <what> <path>" when reading fails.
Status ReadFileBytes(const std::string& path, std::string_view what, std::string* out);

}  // namespace rung
