// core/common/atomic_file.h
//
// The one way rung writes a file a user named or will read (export --out, plot figures and their
// gnuplot data and scripts, rung diag --plot, rung-data's outputs, caches, records): what the path
// names is respected, and a regular file appears whole or not at all.
//
// What the path names decides how it is written:
//   - a symbolic link (a chain of them, dangling or not) is followed: its final target is written
//     and the link stays a link;
//   - a regular file, or nothing yet, is written atomically: to a hidden temporary file beside the
//     target (".NAME.tmp-XXXXXX" in the target's folder), flushed to disk, renamed over the target.
//     An existing target keeps its permission bits; a new one gets 0666 less the umask. A failed or
//     abandoned write removes the temporary file, so a killed writer leaves at most a temporary
//     file, never a partial file under the final name. (Owner and hard links of a replaced file
//     are not kept: the new file is the writer's.)
//   - a character device, block device or FIFO (/dev/null, /dev/full, /dev/stdout on a pipe, a
//     named pipe) is opened and written in place, its write errors reported (/dev/full: "No space
//     left on device"); so is a path that leads through /proc (/dev/stdout, /dev/fd/N: the process's
//     own open files), as the open file it names (a regular file there, such as stdout redirected
//     by the shell, is appended to, not replaced). Whatever reached a device before an error stays.
//   - anything else is refused and left alone: a folder, a socket, an existing regular file the
//     writer may not write (access(W_OK); for root, which access() lets write anything, a file with
//     no write bit at all, such as 0444).
//
// Error codes: INVALID_ARGUMENT naming the path for what the caller may not write there (a refused
// target, a folder that is missing, not a folder or not writable: bad input, rung exits 2);
// RESOURCE_EXHAUSTED for a full disk or device or a quota (ENOSPC, EDQUOT, EFBIG); INTERNAL for
// any other write, flush, close or rename failure (rung exits 1 for both).
//
// Thread safety: reentrant (distinct paths; two writers of one path each write a whole file, the
// last rename wins).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace rung {

// A file being written: Open, Write any number of times, Commit. Destroying it before Commit
// abandons the write (the temporary file removed; the target untouched unless written in place).
class OutputFile {
 public:
  // Checks the target and opens what will be written (the temporary file, or the device in place).
  static StatusOr<OutputFile> Open(const std::string& path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Appends `data`. After an error the file is abandoned: further calls return the same error.
  Status Write(std::string_view data);
  // Finishes: a regular file flushed and renamed over its target; a device closed. Once.
  Status Commit();

  // Whether the target is written in place (a device, a FIFO, a /proc file) rather than replaced.
  bool in_place() const { return target_.empty(); }
  // The path as named.
  const std::string& path() const { return path_; }

 private:
  OutputFile() = default;
  void Abandon();

  std::string path_;       // as named, for messages
  std::string target_;     // the file renamed over (symbolic links resolved); empty in place
  std::string temporary_;  // beside target_; empty in place
  int fd_ = -1;
  bool block_device_ = false;  // flushed on Commit
  Status error_;  // the first failure; the file is abandoned after it
};

// Writes `pieces` in order as `path`, by way of OutputFile (the rules above).
Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> pieces);

}  // namespace rung
