#include "tests/support/small_disk/small_disk.h"

#include <filesystem>

namespace rung::testing {
namespace {

constexpr int kRefusedExit = 99;  // the wrapper's exit when mount is refused

}  // namespace

StatusOr<SmallDiskRun> RunOnSmallDisk(const std::string& disk, const std::string& size, const std::string& script,
                                      const std::vector<std::string>& args, std::chrono::seconds timeout) {
  std::error_code error;
  std::filesystem::create_directories(disk, error);
  if (error) return Status::Internal("cannot create " + disk + ": " + error.message());
  const std::string wrapper = "mount -t tmpfs -o size=" + size + " rung-small-disk \"$RUNG_DISK\" || exit " +
                              std::to_string(kRefusedExit) + "\n" + script;
  SubprocessOptions options;
  options.argv = {"env", "RUNG_DISK=" + disk, "unshare", "-m", "sh", "-c", wrapper, "small-disk"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  RUNG_ASSIGN_OR_RETURN(SubprocessResult result, Subprocess::Run(options, timeout));
  SmallDiskRun run;
  // unshare itself exits 1 with only its own words when the namespace is refused.
  run.refused = result.exit.code == kRefusedExit ||
                (result.exit.code == 1 && result.stdout_text.empty() &&
                 result.stderr_text.rfind("unshare:", 0) == 0);
  if (run.refused) run.refusal = result.stderr_text;
  run.result = std::move(result);
  return run;
}

}  // namespace rung::testing
