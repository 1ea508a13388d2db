// core/common/csv_field.h
//
// One field of a CSV line (RFC 4180): the text as it is, or quoted with "" for each quote inside
// when it holds a comma, a quote or a line break (\r or \n). Every CSV rung writes (exports, fit
// reports, CLI tables) quotes its fields through this.
//
//   CsvField("rope")     -> rope
//   CsvField("a,\"b\"")  -> "a,""b"""
#pragma once

#include <string>

namespace rung {

std::string CsvField(const std::string& text);

}  // namespace rung
