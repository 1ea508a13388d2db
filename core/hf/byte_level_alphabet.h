// core/hf/byte_level_alphabet.h
//
// GPT-2's byte-level alphabet (bytes_to_unicode in GPT-2's encoder.py, ByteLevel in Hugging Face
// tokenizers): each of the 256 byte values stands for one printable character, so that a byte-level
// BPE vocabulary is a set of ordinary strings. The printable ASCII and Latin-1 bytes '!'..'~',
// '¡'..'¬', '®'..'ÿ' stand for themselves; the other 68 take U+0100, U+0101, ... in byte order (a space
// becomes 'Ġ', U+0120; a newline 'Ċ', U+010A).
//
// Thread safety: the tables are built once, on first use, and only read after.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace rung::hf {

// The UTF-8 text of the character each byte stands for.
const std::array<std::string, 256>& ByteLevelCharacters();

// The byte a code point stands for, or -1 where it stands for none.
int ByteOfByteLevelCharacter(uint32_t code_point);

}  // namespace rung::hf
