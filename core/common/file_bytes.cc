#include "core/common/file_bytes.h"

#include <fstream>
#include <iterator>

namespace rung {

Status ReadFileBytes(const std::string& path, std::string_view what, std::string* out) {
  const std::string named = what.empty() ? path : std::string(what) + " " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + named);
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::DataLoss("read error in " + named);
  return Status::Ok();
}

}  // namespace rung
