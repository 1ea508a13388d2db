// coordinator/dashboard/gzip_body.cc
#include "coordinator/dashboard/gzip_body.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace rung::dashboard {

bool AcceptsGzip(std::string_view accept_encoding) {
  // A comma-separated list of codings with optional weights: "gzip;q=0.5, br".
  size_t begin = 0;
  while (begin < accept_encoding.size()) {
    const size_t end = std::min(accept_encoding.find(',', begin), accept_encoding.size());
    std::string item;
    for (char c : accept_encoding.substr(begin, end - begin)) {
      if (!std::isspace(static_cast<unsigned char>(c))) item.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    begin = end + 1;
    const std::string coding = item.substr(0, item.find(';'));
    if (coding != "gzip" && coding != "*") continue;
    const size_t weight = item.find(";q=");
    if (weight == std::string::npos || std::strtod(item.c_str() + weight + 3, nullptr) > 0.0) return true;
  }
  return false;
}

std::optional<std::string> Gzip(std::string_view body) {
  z_stream stream{};
  // windowBits 15 + 16 asks for the gzip wrapper; memLevel 8 is zlib's default.
  if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&stream, static_cast<uLong>(body.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);  // deflateBound's room holds it in one call
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace rung::dashboard
