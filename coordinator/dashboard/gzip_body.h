// coordinator/dashboard/gzip_body.h
//
// Response bodies the dashboard compresses itself. cpp-httplib compresses a response on its own when
// its Content-Type is text/* or exactly application/json or application/javascript, and prefers Brotli
// at its default, slowest quality whenever a browser accepts it: seconds for a megabyte of JSON. The
// dashboard's large bodies (the API's JSON, the page's script) therefore carry types with a charset
// parameter, which httplib leaves alone, and are gzip-compressed here at a fast level when the request
// accepts gzip.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rung::dashboard {

// Bodies shorter than this go out as they are.
constexpr size_t kMinGzipBytes = 1024;

// True when an Accept-Encoding header value lists gzip (or *) without q=0.
bool AcceptsGzip(std::string_view accept_encoding);

// body in the gzip format (RFC 1952), compressed by zlib at level 6; nullopt if zlib fails (no memory),
// and the body then goes out as it is.
std::optional<std::string> Gzip(std::string_view body);

}  // namespace rung::dashboard
