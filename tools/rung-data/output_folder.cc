#include "tools/rung-data/output_folder.h"

#include <filesystem>
#include <system_error>

namespace rung::data_tool {

Status CheckOutputFolder(const std::string& out) {
  if (out.empty()) return Status::InvalidArgument("--out is empty: name the output folder");
  std::error_code error;
  for (std::filesystem::path at(out); !at.empty(); at = at.parent_path()) {
    const std::filesystem::file_status status = std::filesystem::status(at, error);
    if (std::filesystem::exists(status)) {
      if (std::filesystem::is_directory(status)) return Status::Ok();
      return Status::InvalidArgument(at == std::filesystem::path(out)
                                         ? "--out " + out + " is a file, not a folder"
                                         : "--out " + out + ": " + at.string() + " is a file, not a folder");
    }
    if (at == at.parent_path()) break;
  }
  return Status::Ok();
}

}  // namespace rung::data_tool
