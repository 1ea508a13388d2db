// bench/stand_in_trainer.cc
//
// rung-bench-stand-in: a trainer that does no training, FOR BENCHMARKS ONLY (bench/orchestration.py,
// the "trial kind that does no training"). It speaks rung-train's command-line and record-line
// contract exactly as rung-worker calls it (worker/agent/trainer_process.h, worker/train_main.cc), so
// the real lease -> spawn -> relay -> complete path can be timed without LibTorch and without the
// cost of training:
//
//   rung-bench-stand-in --config trial.json [--checkpoint-dir DIR] [--resume auto|never|PATH]
//                       [--threads N] [--stop-after-step N]
//                       [--steps N] [--lines-per-second R]
//
// stdout, one JSON object per line, each written with one write(2):
//   {"type":"provenance", ...}   first: trainer "rung-bench-stand-in", commit, host, threads, the
//                                config as read, steps, start_step, resumed_from
//   {"type":"step", ...}         one per step: step, tokens, flops, flops_total, lr, train_loss,
//                                tokens_per_sec, elapsed_sec (7 metric points each once the agent
//                                splits it; fake numbers), at most R per second (0: as fast as it can)
//   {"type":"checkpoint", ...}   and {"type":"preempted", ...} after SIGTERM/SIGUSR1 or
//                                --stop-after-step (the checkpoint is a small JSON file named and
//                                published like rung-train's, core/train/checkpoint.h: ckpt-<step>.pt
//                                written to a temp file, fsynced, renamed, the folder fsynced, the
//                                newest 2 kept; a resumed attempt continues its steps)
//   {"type":"final", ...}        last: step, val_loss, train_tokens_per_sec, peak_rss_bytes
// Exit codes as rung-train: 0 done, 2 bad arguments or config, 4 checkpoint or config unreadable,
// 75 stopped by SIGTERM/SIGUSR1 after a checkpoint (preempted), 1 anything else.
//
// --steps and --lines-per-second default to the environment variables RUNG_STAND_IN_STEPS (else 3)
// and RUNG_STAND_IN_LINES_PER_SECOND (else 0): rung-worker passes its environment to its trainers
// but not these flags, so a benchmark sets them on the workers. The config must be JSON (what
// rung-worker writes; checked); it is echoed in the provenance record and otherwise ignored.
//
// Why it is written against the kernel alone: the benchmark measures rung's orchestration (lease,
// workspace, spawn, relay, complete), and a trial that does nothing should cost next to nothing, as
// Optuna's objective does in the same benchmark. glibc's start-up alone costs ~0.3 ms of CPU per
// process on this VM (it asks CPUID for cache sizes, a hypervisor trap each time), more than the
// coordinator's share of a trial. So the default build (RUNG_STAND_IN_FREESTANDING) has its own
// _start and talks to Linux through system calls only: no libc, no allocation, static buffers.
// Built without that macro, the same source is a main() linked against glibc (static): target
// rung-bench-stand-in-glibc, the same trial with glibc's start-up, for the comparison in
// bench/README.md. x86-64 Linux only (the system-call instruction and numbers).
//
// Signals: SIGTERM and SIGUSR1 are blocked and polled (rt_sigtimedwait) between steps and while
// waiting for the next line, so no handler (and no signal trampoline) is needed.
#include <stddef.h>
#include <stdint.h>

#include <linux/fcntl.h>
#include <sys/syscall.h>

namespace rung {
const char* BuildCommit();  // generated: build/generated/build_info.cc (no library needed)
}  // namespace rung

namespace {

constexpr int kExitOk = 0, kExitOther = 1, kExitUsage = 2, kExitData = 4, kExitPreempted = 75;
constexpr int64_t kTokensPerStep = 4096;
constexpr double kFlopsPerToken = 6.0e6;
constexpr int kKeepCheckpoints = 2;
constexpr int kSigTerm = 15, kSigUsr1 = 10;
constexpr uint64_t kStopSignals = (1ULL << (kSigTerm - 1)) | (1ULL << (kSigUsr1 - 1));

// ---- system calls ----------------------------------------------------------------------------

long Syscall(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return result;  // -errno on failure
}

struct KernelTimespec {
  int64_t seconds;
  int64_t nanoseconds;
};

[[noreturn]] void Exit(int code) {
  Syscall(SYS_exit_group, code);
  __builtin_unreachable();
}

double MonotonicSeconds() {
  KernelTimespec now{};
  Syscall(SYS_clock_gettime, 1 /* CLOCK_MONOTONIC */, reinterpret_cast<long>(&now));
  return static_cast<double>(now.seconds) + static_cast<double>(now.nanoseconds) * 1e-9;
}

// ---- text --------------------------------------------------------------------------------------

size_t Length(const char* text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  return length;
}

bool Equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

bool StartsWith(const char* text, const char* prefix) {
  while (*prefix != '\0' && *text == *prefix) ++text, ++prefix;
  return *prefix == '\0';
}

// A bounded text buffer; text that does not fit is dropped and remembered (Overflowed()).
template <size_t kCapacity>
class Text {
 public:
  Text& Add(const char* text, size_t length) {
    if (length > kCapacity - 1 - size_) {
      overflowed_ = true;
      length = kCapacity - 1 - size_;
    }
    for (size_t i = 0; i < length; ++i) data_[size_++] = text[i];
    data_[size_] = '\0';
    return *this;
  }
  Text& Add(const char* text) { return Add(text, Length(text)); }
  Text& Add(char c) { return Add(&c, 1); }
  Text& Int(int64_t value) {
    char digits[24];
    size_t count = 0;
    uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0) Add('-');
    while (count > 0) Add(digits[--count]);
    return *this;
  }
  // A finite double as a JSON number with 10 significant digits (d.ddddddddde[+-]x); 0 otherwise.
  Text& Double(double value) {
    if (!(value == value) || value > 1e300 || value < -1e300 || value == 0) return Add('0');
    if (value < 0) {
      Add('-');
      value = -value;
    }
    int exponent = 0;
    while (value >= 10) value /= 10, ++exponent;
    while (value < 1) value *= 10, --exponent;
    uint64_t mantissa = static_cast<uint64_t>(value * 1e9 + 0.5);  // 10 digits
    if (mantissa >= 10000000000ULL) mantissa /= 10, ++exponent;
    char digits[10];
    for (int i = 9; i >= 0; --i) digits[i] = static_cast<char>('0' + mantissa % 10), mantissa /= 10;
    Add(digits[0]).Add('.').Add(digits + 1, 9).Add('e');
    return Int(exponent);
  }
  // `text` as a JSON string, quotes included.
  Text& Quoted(const char* text) {
    Add('"');
    for (; *text != '\0'; ++text) {
      const unsigned char c = static_cast<unsigned char>(*text);
      if (c == '"' || c == '\\') {
        Add('\\').Add(static_cast<char>(c));
      } else if (c < 0x20) {
        const char* hex = "0123456789abcdef";
        Add("\\u00").Add(hex[c >> 4]).Add(hex[c & 15]);
      } else {
        Add(static_cast<char>(c));
      }
    }
    return Add('"');
  }
  const char* c_str() const { return data_; }
  size_t size() const { return size_; }
  bool Overflowed() const { return overflowed_; }
  void Clear() {
    size_ = 0;
    data_[0] = '\0';
    overflowed_ = false;
  }

 private:
  char data_[kCapacity] = {};
  size_t size_ = 0;
  bool overflowed_ = false;
};

using Path = Text<4096>;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const long written = Syscall(SYS_write, fd, reinterpret_cast<long>(data), static_cast<long>(size));
    if (written == -4 /* EINTR */) continue;
    if (written <= 0) return false;
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

void Error(const char* message, const char* detail = "") {
  Text<8192> line;
  line.Add("rung-bench-stand-in: ").Add(message).Add(detail).Add('\n');
  WriteAll(2, line.c_str(), line.size());
}

// One record line on stdout in one write; the agent reads lines.
void Emit(Text<1 << 21>& record) {
  record.Add('\n');
  if (record.Overflowed() || !WriteAll(1, record.c_str(), record.size())) {
    Error("cannot write a record to stdout");
    Exit(kExitOther);
  }
  record.Clear();
}

Text<1 << 21> record;  // the line being built (the provenance carries the whole config)

// Reads a whole small file into `out` (NUL-terminated). -errno, or -27 (EFBIG) when it does not fit.
template <size_t kCapacity>
long ReadFile(const char* path, Text<kCapacity>& out) {
  const long fd = Syscall(SYS_open, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fd;
  char chunk[4096];
  long result = 0;
  for (;;) {
    const long got = Syscall(SYS_read, fd, reinterpret_cast<long>(chunk), sizeof(chunk));
    if (got == -4) continue;
    if (got <= 0) {
      result = got;
      break;
    }
    out.Add(chunk, static_cast<size_t>(got));
    if (out.Overflowed()) {
      result = -27;
      break;
    }
  }
  Syscall(SYS_close, fd);
  return result;
}

// ---- JSON validation (RFC 8259 grammar; the values themselves are not needed) --------------------

class JsonChecker {
 public:
  explicit JsonChecker(const char* text) : at_(text) {}
  bool Document() {
    Space();
    if (!Value(0)) return false;
    Space();
    return *at_ == '\0';
  }

 private:
  void Space() {
    while (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r') ++at_;
  }
  bool Literal(const char* word) {
    if (!StartsWith(at_, word)) return false;
    at_ += Length(word);
    return true;
  }
  static bool Digit(char c) { return c >= '0' && c <= '9'; }
  bool Number() {
    if (*at_ == '-') ++at_;
    if (*at_ == '0') {
      ++at_;
    } else if (Digit(*at_)) {
      while (Digit(*at_)) ++at_;
    } else {
      return false;
    }
    if (*at_ == '.') {
      ++at_;
      if (!Digit(*at_)) return false;
      while (Digit(*at_)) ++at_;
    }
    if (*at_ == 'e' || *at_ == 'E') {
      ++at_;
      if (*at_ == '+' || *at_ == '-') ++at_;
      if (!Digit(*at_)) return false;
      while (Digit(*at_)) ++at_;
    }
    return true;
  }
  bool String() {
    if (*at_++ != '"') return false;
    for (;;) {
      const unsigned char c = static_cast<unsigned char>(*at_++);
      if (c == '"') return true;
      if (c < 0x20) return false;  // control characters (and the end of the text)
      if (c != '\\') continue;
      const char escape = *at_++;
      if (escape == 'u') {
        for (int i = 0; i < 4; ++i, ++at_) {
          const char h = *at_;
          if (!Digit(h) && !(h >= 'a' && h <= 'f') && !(h >= 'A' && h <= 'F')) return false;
        }
      } else if (escape != '"' && escape != '\\' && escape != '/' && escape != 'b' && escape != 'f' &&
                 escape != 'n' && escape != 'r' && escape != 't') {
        return false;
      }
    }
  }
  bool Value(int depth) {
    if (depth > 256) return false;
    switch (*at_) {
      case '{':
        return Container('}', depth, true);
      case '[':
        return Container(']', depth, false);
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }
  bool Container(char close, int depth, bool object) {
    ++at_;
    Space();
    if (*at_ == close) return ++at_, true;
    for (;;) {
      if (object) {
        if (!String()) return false;
        Space();
        if (*at_++ != ':') return false;
        Space();
      }
      if (!Value(depth + 1)) return false;
      Space();
      if (*at_ == close) return ++at_, true;
      if (*at_++ != ',') return false;
      Space();
    }
  }

  const char* at_;
};

// ---- numbers from arguments and the environment ---------------------------------------------------

bool ParseInt(const char* text, int64_t* value) {
  bool negative = *text == '-';
  if (negative || *text == '+') ++text;
  if (*text == '\0') return false;
  int64_t result = 0;
  for (; *text != '\0'; ++text) {
    if (*text < '0' || *text > '9' || result > (INT64_MAX - 9) / 10) return false;
    result = result * 10 + (*text - '0');
  }
  *value = negative ? -result : result;
  return true;
}

// Decimal numbers with an optional fraction and exponent ("2", "0.5", "1e3").
bool ParseDouble(const char* text, double* value) {
  JsonChecker checker(text);
  if (!checker.Document() || *text == '\0' || *text == '"' || *text == '[' || *text == '{' || *text == 't' ||
      *text == 'f' || *text == 'n') {
    return false;
  }
  bool negative = *text == '-';
  if (negative) ++text;
  double result = 0;
  for (; *text >= '0' && *text <= '9'; ++text) result = result * 10 + (*text - '0');
  if (*text == '.') {
    double scale = 0.1;
    for (++text; *text >= '0' && *text <= '9'; ++text, scale /= 10) result += (*text - '0') * scale;
  }
  if (*text == 'e' || *text == 'E') {
    int64_t exponent = 0;
    if (!ParseInt(text + 1, &exponent) || exponent > 308 || exponent < -308) return false;
    for (; exponent > 0; --exponent) result *= 10;
    for (; exponent < 0; ++exponent) result /= 10;
  }
  *value = negative ? -result : result;
  return true;
}

const char* Environment(char** envp, const char* name) {
  const size_t length = Length(name);
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    if (StartsWith(*envp, name) && (*envp)[length] == '=') return *envp + length + 1;
  }
  return nullptr;
}

// ---- checkpoints (the naming and publication of core/train/checkpoint.h) --------------------------

void JoinPath(Path& out, const char* dir, const char* name) {
  out.Clear();
  out.Add(dir);
  if (out.size() > 0 && out.c_str()[out.size() - 1] != '/') out.Add('/');
  out.Add(name);
}

void CheckpointPath(Path& out, const char* dir, int64_t step) {
  Text<32> name;
  Text<16> digits;
  digits.Int(step);
  name.Add("ckpt-");
  for (size_t pad = digits.size(); pad < 10; ++pad) name.Add('0');
  name.Add(digits.c_str()).Add(".pt");
  JoinPath(out, dir, name.c_str());
}

bool IsCheckpointName(const char* name) {
  const size_t length = Length(name);
  return StartsWith(name, "ckpt-") && length > 3 && Equal(name + length - 3, ".pt");
}

int Compare(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
}

struct Dirent64 {
  uint64_t inode;
  int64_t offset;
  unsigned short record_length;
  unsigned char type;
  char name[1];
};

// Calls visit(name) for every checkpoint file name in `dir` (none when it does not exist).
template <typename Visit>
void ForEachCheckpoint(const char* dir, Visit visit) {
  const long fd = Syscall(SYS_open, reinterpret_cast<long>(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buffer[8192];
  for (;;) {
    const long got = Syscall(SYS_getdents64, fd, reinterpret_cast<long>(buffer), sizeof(buffer));
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const Dirent64* entry = reinterpret_cast<const Dirent64*>(buffer + at);
      if (IsCheckpointName(entry->name)) visit(entry->name);
      at += entry->record_length;
    }
  }
  Syscall(SYS_close, fd);
}

// The newest checkpoint in `dir` (names sort by step), or false.
bool NewestCheckpoint(const char* dir, Path& out) {
  Text<256> newest;
  ForEachCheckpoint(dir, [&](const char* name) {
    if (newest.size() == 0 || Compare(name, newest.c_str()) > 0) newest.Clear(), newest.Add(name);
  });
  if (newest.size() == 0) return false;
  JoinPath(out, dir, newest.c_str());
  return true;
}

// The step a checkpoint of this stand-in holds ({"stand_in":true,"step":N}), or an exit code.
int CheckpointStep(const char* path, int64_t* step) {
  Text<4096> content;
  const long read = ReadFile(path, content);
  if (read < 0) {
    Error("cannot read checkpoint ", path);
    return kExitData;
  }
  JsonChecker checker(content.c_str());
  const char* key = content.c_str();
  while (*key != '\0' && !StartsWith(key, "\"step\":")) ++key;
  Text<32> digits;
  if (*key != '\0') {
    for (key += 7; (*key >= '0' && *key <= '9') || *key == '-'; ++key) digits.Add(*key);
  }
  if (!checker.Document() || content.c_str()[0] != '{' || !ParseInt(digits.c_str(), step)) {
    Error(path, " is not a checkpoint of rung-bench-stand-in");
    return kExitData;
  }
  return kExitOk;
}

long SyncPath(const char* path, int flags) {
  const long fd = Syscall(SYS_open, reinterpret_cast<long>(path), flags | O_CLOEXEC);
  if (fd < 0) return fd;
  const long synced = Syscall(SYS_fsync, fd);
  Syscall(SYS_close, fd);
  return synced;
}

// Creates `dir` and its parents (mode 0777 less the umask, as std::filesystem does).
bool CreateDirectories(const char* dir) {
  Path partial;
  for (const char* at = dir;; ++at) {
    if ((*at == '/' || *at == '\0') && partial.size() > 0) {
      const long made = Syscall(SYS_mkdir, reinterpret_cast<long>(partial.c_str()), 0777);
      if (made < 0 && made != -17 /* EEXIST */) return false;
    }
    if (*at == '\0') return true;
    partial.Add(*at);
  }
}

// Publishes {"stand_in":true,"step":step} as dir/ckpt-<step>.pt and keeps the newest two.
bool WriteCheckpoint(const char* dir, int64_t step, Path& final_path) {
  CheckpointPath(final_path, dir, step);
  Path temp;
  temp.Add(final_path.c_str()).Add(".tmp.").Int(Syscall(SYS_getpid));
  Text<64> content;
  content.Add("{\"stand_in\":true,\"step\":").Int(step).Add("}\n");
  if (!CreateDirectories(dir)) return Error("cannot create checkpoint directory ", dir), false;
  const long fd = Syscall(SYS_open, reinterpret_cast<long>(temp.c_str()), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                          0644);
  if (fd < 0) return Error("cannot write ", temp.c_str()), false;
  const bool written = WriteAll(static_cast<int>(fd), content.c_str(), content.size()) && Syscall(SYS_fsync, fd) == 0;
  Syscall(SYS_close, fd);
  if (!written || Syscall(SYS_rename, reinterpret_cast<long>(temp.c_str()),
                          reinterpret_cast<long>(final_path.c_str())) != 0) {
    Syscall(SYS_unlink, reinterpret_cast<long>(temp.c_str()));
    return Error("cannot publish ", final_path.c_str()), false;
  }
  if (SyncPath(dir, O_RDONLY | O_DIRECTORY) != 0) return Error("cannot fsync ", dir), false;
  // Keep the newest kKeepCheckpoints: drop the oldest while more remain.
  for (;;) {
    int count = 0;
    Text<256> oldest;
    ForEachCheckpoint(dir, [&](const char* name) {
      ++count;
      if (oldest.size() == 0 || Compare(name, oldest.c_str()) < 0) oldest.Clear(), oldest.Add(name);
    });
    if (count <= kKeepCheckpoints) return true;
    Path doomed;
    JoinPath(doomed, dir, oldest.c_str());
    if (Syscall(SYS_unlink, reinterpret_cast<long>(doomed.c_str())) != 0) return true;  // retention is best effort
  }
}

// ---- the run ---------------------------------------------------------------------------------------

struct Options {
  const char* config_path = nullptr;
  const char* checkpoint_dir = "";
  const char* resume = "auto";
  int64_t threads = 1;
  int64_t stop_after_step = 0;
  int64_t steps = 3;
  double lines_per_second = 0;
};

constexpr const char* kUsage =
    "rung-bench-stand-in: FOR BENCHMARKS ONLY. Speaks rung-train's arguments, JSON record lines and exit codes\n"
    "but trains nothing.\n"
    "Exit codes: 0 done, 2 bad config, 4 checkpoint unusable, 75 preempted (checkpoint written), 1 other.\n"
    "\n"
    "Usage: rung-bench-stand-in --config FILE [OPTIONS]\n"
    "\n"
    "Options:\n"
    "  -h,--help                 Print this help message and exit\n"
    "  --config FILE             Trial config file (JSON) REQUIRED\n"
    "  --checkpoint-dir DIR      Directory for this attempt's checkpoints\n"
    "  --resume TEXT             auto (newest checkpoint in --checkpoint-dir), never, or a checkpoint path\n"
    "  --threads N               CPU threads (recorded only)\n"
    "  --stop-after-step N       Checkpoint and stop as if preempted after this step\n"
    "  --steps N                 Step records to print (default: $RUNG_STAND_IN_STEPS, else 3)\n"
    "  --lines-per-second R      At most this many step records per second; 0: as fast as possible\n"
    "                            (default: $RUNG_STAND_IN_LINES_PER_SECOND, else 0)\n";

// Parses the command line (--name VALUE or --name=VALUE) and the environment; exits on errors.
Options ParseOptions(int argc, char** argv, char** envp) {
  Options options;
  if (const char* steps = Environment(envp, "RUNG_STAND_IN_STEPS"); steps != nullptr && *steps != '\0') {
    if (!ParseInt(steps, &options.steps)) Error("RUNG_STAND_IN_STEPS is not an integer: ", steps), Exit(kExitUsage);
  }
  if (const char* rate = Environment(envp, "RUNG_STAND_IN_LINES_PER_SECOND"); rate != nullptr && *rate != '\0') {
    if (!ParseDouble(rate, &options.lines_per_second)) {
      Error("RUNG_STAND_IN_LINES_PER_SECOND is not a number: ", rate);
      Exit(kExitUsage);
    }
  }
  for (int index = 1; index < argc; ++index) {
    const char* argument = argv[index];
    if (Equal(argument, "-h") || Equal(argument, "--help")) {
      WriteAll(1, kUsage, Length(kUsage));
      Exit(kExitOk);
    }
    Text<64> name;
    const char* value = nullptr;
    if (StartsWith(argument, "--")) {
      const char* at = argument;
      while (*at != '\0' && *at != '=') name.Add(*at++);
      if (*at == '=') value = at + 1;
    }
    const bool known = Equal(name.c_str(), "--config") || Equal(name.c_str(), "--checkpoint-dir") ||
                       Equal(name.c_str(), "--resume") || Equal(name.c_str(), "--threads") ||
                       Equal(name.c_str(), "--stop-after-step") || Equal(name.c_str(), "--steps") ||
                       Equal(name.c_str(), "--lines-per-second");
    if (!known) Error("unknown argument ", argument), WriteAll(2, kUsage, Length(kUsage)), Exit(kExitUsage);
    if (value == nullptr) {
      if (index + 1 >= argc) Error(name.c_str(), " needs a value"), Exit(kExitUsage);
      value = argv[++index];
    }
    bool good = true;
    if (Equal(name.c_str(), "--config")) {
      options.config_path = value;
    } else if (Equal(name.c_str(), "--checkpoint-dir")) {
      options.checkpoint_dir = value;
    } else if (Equal(name.c_str(), "--resume")) {
      options.resume = value;
    } else if (Equal(name.c_str(), "--threads")) {
      good = ParseInt(value, &options.threads) && options.threads > 0;
    } else if (Equal(name.c_str(), "--stop-after-step")) {
      good = ParseInt(value, &options.stop_after_step);
    } else if (Equal(name.c_str(), "--steps")) {
      good = ParseInt(value, &options.steps) && options.steps >= 0;
    } else {
      good = ParseDouble(value, &options.lines_per_second) && options.lines_per_second >= 0;
    }
    if (!good) Error("bad value for ", name.c_str()), Exit(kExitUsage);
  }
  if (options.config_path == nullptr) Error("--config is required"), Exit(kExitUsage);
  if (options.steps < 0 || options.lines_per_second < 0) {
    Error("steps and lines per second must not be negative");
    Exit(kExitUsage);
  }
  return options;
}

// The stop signal taken if one is pending (waiting up to `seconds` for one), else 0.
int TakeStopSignal(double seconds) {
  KernelTimespec wait{};
  if (seconds > 0) {
    wait.seconds = static_cast<int64_t>(seconds);
    wait.nanoseconds = static_cast<int64_t>((seconds - static_cast<double>(wait.seconds)) * 1e9);
  }
  uint64_t set = kStopSignals;
  alignas(8) char info[128];
  for (;;) {
    const long taken = Syscall(SYS_rt_sigtimedwait, reinterpret_cast<long>(&set), reinterpret_cast<long>(info),
                               reinterpret_cast<long>(&wait), sizeof(set));
    if (taken > 0) return static_cast<int>(taken);
    if (taken != -4 /* EINTR */) return 0;  // EAGAIN: the time is up
  }
}

struct UtsName {
  char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

int64_t PeakRssBytes() {
  struct {
    int64_t utime[2], stime[2];
    int64_t maxrss;
    int64_t rest[13];
  } usage{};
  Syscall(SYS_getrusage, 0 /* RUSAGE_SELF */, reinterpret_cast<long>(&usage));
  return usage.maxrss * 1024;
}

double TrainLoss(int64_t step) { return step > 0 ? 5.0 / __builtin_sqrt(static_cast<double>(step)) : 5.0; }

int StandInMain(int argc, char** argv, char** envp) {
  const Options options = ParseOptions(argc, argv, envp);

  static Text<(1 << 21) - 4096> config;
  if (const long read = ReadFile(options.config_path, config); read < 0) {
    Error(read == -27 ? "config larger than 2 MiB: " : "cannot read ", options.config_path);
    return read == -27 ? kExitUsage : kExitData;
  }
  if (!JsonChecker(config.c_str()).Document()) return Error(options.config_path, " is not JSON"), kExitUsage;
  // The config is echoed as it is, less the trailing white space.
  size_t config_size = config.size();
  while (config_size > 0 && (config.c_str()[config_size - 1] == '\n' || config.c_str()[config_size - 1] == ' ' ||
                             config.c_str()[config_size - 1] == '\r' || config.c_str()[config_size - 1] == '\t')) {
    --config_size;
  }

  uint64_t blocked = kStopSignals;
  Syscall(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, reinterpret_cast<long>(&blocked), 0, sizeof(blocked));

  Path resumed_from;
  if (Equal(options.resume, "auto")) {
    if (*options.checkpoint_dir != '\0') NewestCheckpoint(options.checkpoint_dir, resumed_from);
  } else if (!Equal(options.resume, "never")) {
    resumed_from.Add(options.resume);
  }
  int64_t step = 0;
  if (resumed_from.size() > 0) {
    if (const int code = CheckpointStep(resumed_from.c_str(), &step); code != kExitOk) return code;
  }

  UtsName host{};
  Syscall(SYS_uname, reinterpret_cast<long>(&host));
  record.Add("{\"type\":\"provenance\",\"trainer\":\"rung-bench-stand-in (benchmarks only: no training)\",\"commit\":")
      .Quoted(rung::BuildCommit())
      .Add(",\"host\":")
      .Quoted(host.nodename)
      .Add(",\"threads\":")
      .Int(options.threads)
      .Add(",\"config\":")
      .Add(config.c_str(), config_size)
      .Add(",\"steps\":")
      .Int(options.steps)
      .Add(",\"start_step\":")
      .Int(step)
      .Add(",\"resumed_from\":");
  if (resumed_from.size() > 0) {
    record.Quoted(resumed_from.c_str());
  } else {
    record.Add("null");
  }
  Emit(record.Add('}'));

  const double start = MonotonicSeconds();
  const double interval = options.lines_per_second > 0 ? 1.0 / options.lines_per_second : 0.0;
  int64_t emitted = 0;
  while (step < options.steps) {
    int signal_number = TakeStopSignal(0);
    // Rate limit: wait for the next line's time, woken early by a stop signal.
    for (double wait; signal_number == 0 && interval > 0 &&
                      (wait = start + interval * static_cast<double>(emitted) - MonotonicSeconds()) > 0;) {
      signal_number = TakeStopSignal(wait);
    }
    if (signal_number != 0 || (options.stop_after_step > 0 && step >= options.stop_after_step)) {
      Path checkpoint;
      if (*options.checkpoint_dir != '\0') {
        if (!WriteCheckpoint(options.checkpoint_dir, step, checkpoint)) return kExitOther;
        Emit(record.Add("{\"type\":\"checkpoint\",\"step\":")
                 .Int(step)
                 .Add(",\"path\":")
                 .Quoted(checkpoint.c_str())
                 .Add(",\"reason\":")
                 .Quoted(signal_number != 0 ? "signal" : "stop_after_step")
                 .Add('}'));
      }
      record.Add("{\"type\":\"preempted\",\"step\":").Int(step).Add(",\"signal\":").Int(signal_number);
      record.Add(",\"checkpoint\":");
      if (checkpoint.size() > 0) {
        record.Quoted(checkpoint.c_str());
      } else {
        record.Add("null");
      }
      Emit(record.Add('}'));
      Error("stopped after a checkpoint (preempted)");
      return kExitPreempted;
    }
    ++step;
    ++emitted;
    const int64_t tokens = step * kTokensPerStep;
    const double elapsed = MonotonicSeconds() - start;
    Emit(record.Add("{\"type\":\"step\",\"step\":")
             .Int(step)
             .Add(",\"tokens\":")
             .Int(tokens)
             .Add(",\"flops\":")
             .Double(kFlopsPerToken * kTokensPerStep)
             .Add(",\"flops_total\":")
             .Double(kFlopsPerToken * static_cast<double>(tokens))
             .Add(",\"lr\":")
             .Double(1e-3)
             .Add(",\"train_loss\":")
             .Double(TrainLoss(step))
             .Add(",\"tokens_per_sec\":")
             .Double(elapsed > 0 ? static_cast<double>(tokens) / elapsed : 0.0)
             .Add(",\"elapsed_sec\":")
             .Double(elapsed)
             .Add('}'));
  }
  const double elapsed = MonotonicSeconds() - start;
  Emit(record.Add("{\"type\":\"final\",\"step\":")
           .Int(step)
           .Add(",\"val_loss\":")
           .Double(TrainLoss(step))
           .Add(",\"train_tokens_per_sec\":")
           .Double(elapsed > 0 ? static_cast<double>(emitted * kTokensPerStep) / elapsed : 0.0)
           .Add(",\"peak_rss_bytes\":")
           .Int(PeakRssBytes())
           .Add('}'));
  return kExitOk;
}

}  // namespace

#ifdef RUNG_STAND_IN_FREESTANDING
// The compiler may call these for copies and zeroing; there is no libc to provide them.
extern "C" void* memset(void* destination, int value, size_t size) {
  unsigned char* out = static_cast<unsigned char*>(destination);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>(value);
  return destination;
}
extern "C" void* memcpy(void* destination, const void* source, size_t size) {
  unsigned char* out = static_cast<unsigned char*>(destination);
  const unsigned char* in = static_cast<const unsigned char*>(source);
  for (size_t i = 0; i < size; ++i) out[i] = in[i];
  return destination;
}
extern "C" void* memmove(void* destination, const void* source, size_t size) {
  unsigned char* out = static_cast<unsigned char*>(destination);
  const unsigned char* in = static_cast<const unsigned char*>(source);
  if (out < in) {
    for (size_t i = 0; i < size; ++i) out[i] = in[i];
  } else {
    for (size_t i = size; i-- > 0;) out[i] = in[i];
  }
  return destination;
}

// The process entry: the kernel leaves argc, argv..., NULL, envp..., NULL on the stack.
extern "C" [[noreturn]] void StandInStart(long* stack) {
  const int argc = static_cast<int>(stack[0]);
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  Exit(StandInMain(argc, argv, envp));
}
__asm__(
    ".text\n"
    ".globl _start\n"
    "_start:\n"
    "  xor %rbp, %rbp\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call StandInStart\n"
    "  ud2\n");
#else
int main(int argc, char** argv, char** envp) { return StandInMain(argc, argv, envp); }
#endif
