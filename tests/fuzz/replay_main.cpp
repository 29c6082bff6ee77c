// main() for the fuzz targets when built without libFuzzer: runs
// LLVMFuzzerTestOneInput once on every file named on the command line or
// found (recursively) in a folder named there. CI runs each target over its
// seeds and its regression corpus (tests/fuzz/regressions/TARGET) this way,
// under the sanitizers.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: %s: cannot be read\n", file.c_str());
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int failures = 0;
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto& e : fs::recursive_directory_iterator(arg)) {
        if (!e.is_regular_file()) continue;
        failures += replay(e.path());
        ++inputs;
      }
    } else {
      failures += replay(arg);
      ++inputs;
    }
  }
  std::printf("%s: %zu inputs replayed\n", argc > 0 ? argv[0] : "replay", inputs);
  return failures == 0 && inputs > 0 ? 0 : 1;
}
