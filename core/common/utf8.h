// core/common/utf8.h
//
// UTF-8 validity, for inputs that must be text: YAML keys and strings (config/yaml_document.cc), the
// documents rung-data tokenizes (their first invalid byte is the error's offset).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace rung {

// The length of the longest valid UTF-8 prefix of `text` (its size when all of it is valid): no
// overlong forms, surrogates or code points past U+10FFFF.
size_t ValidUtf8Prefix(std::string_view text);

}  // namespace rung
