// fuzz/replay_main.cc
//
// The main of a fuzz target's replay build: what `make test` runs (fuzz/CMakeLists.txt, the
// `fuzz_replay_*` tests). It hands every file of the folders and files it is given, whole and in
// sorted order, to the target's LLVMFuzzerTestOneInput (after LLVMFuzzerInitialize, when the
// target has one), exactly as libFuzzer replays a corpus, but compiled by the tree's own compiler
// without libFuzzer: the committed corpora and regression inputs are checked on every build, and
// any input that crashes a target again fails the test. Exit 0 after every input ran, 2 when a
// path cannot be read. Fuzzing proper (new inputs, sanitizers) is `make fuzz` (docs/fuzzing.md).
//
//   <target>_fuzz_replay PATH...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH...  (files, or folders whose files are replayed)\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int index = 1; index < argc; ++index) {
    std::error_code error;
    const fs::path path(argv[index]);
    if (fs::is_directory(path, error)) {
      for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (fs::is_regular_file(path, error)) {
      inputs.push_back(path);
    }
    if (error) {
      std::fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[index], error.message().c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  for (const fs::path& input : inputs) {
    std::ifstream file(input, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!file.good() && !file.eof()) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], input.c_str());
      return 2;
    }
    std::fprintf(stderr, "%s\n", input.c_str());  // the last line names the input of a crash
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "%s: %zu inputs replayed\n", argv[0], inputs.size());
  return 0;
}
