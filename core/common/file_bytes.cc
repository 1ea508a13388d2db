#include "core/common/file_bytes.h"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace rung {

Status ReadFileBytes(const std::string& path, std::string_view what, std::string* out) {
  const std::string named = what.empty() ? path : std::string(what) + " " + path;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return Status::NotFound("cannot open " + named + ": it is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + named);
  try {  // libstdc++'s filebuf throws where the read itself fails (a folder opened after all, EIO)
    out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception& failure) {
    return Status::DataLoss("read error in " + named + ": " + failure.what());
  }
  if (in.bad()) return Status::DataLoss("read error in " + named);
  return Status::Ok();
}

}  // namespace rung
