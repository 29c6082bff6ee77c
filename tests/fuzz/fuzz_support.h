#pragma once
// Shared by the fuzz targets (tests/fuzz): a byte reader for structured
// inputs, a per-process scratch file for readers that take a path, and
// running a loaded program the way `etc run` does.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "runtime/executor/program.h"

namespace etc::fuzz {

// Reads fuzz input bytes front to back; past the end every read yields 0.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // A value in [0, n) (n > 0).
  size_t pick(size_t n) { return byte() % n; }
  bool flag() { return byte() & 1; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  template <typename T, size_t N>
  const T& one_of(const T (&values)[N]) {
    return values[pick(N)];
  }
  // The bytes not read yet.
  const uint8_t* rest() const { return data_ + (pos_ < size_ ? pos_ : size_); }
  size_t rest_size() const { return pos_ < size_ ? size_ - pos_ : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A file of this process's own under the temp folder, rewritten per input,
// for the readers that take a path (the ONNX importer, .npy / .pb readers);
// removed when the process exits normally (a crash leaves it, the input
// that crashed).
inline std::string scratch_path(const char* extension) {
  struct Scratch {
    std::set<std::string> paths;
    ~Scratch() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  };
  static Scratch scratch;
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir && *dir ? dir : "/tmp") + "/etc_fuzz_" + std::to_string(getpid()) + extension;
  scratch.paths.insert(path);
  return path;
}

inline std::string write_scratch(const uint8_t* data, size_t size, const char* extension) {
  const std::string path = scratch_path(extension);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// What a program's run may do with the fuzzer's remaining bytes.
struct RunBudget {
  // Skip execution when the inputs hold more elements than this (init is
  // still checked): keeps each input fast.
  int64_t max_input_elements = 1 << 16;
};

// Initializes every plan of a loaded program, fills its inputs from `fill`
// (cycled; zeros when empty) and executes once. Returns false when init
// fails, with the message in *why.
bool init_and_run(const Program& program, const uint8_t* fill, size_t fill_size, const RunBudget& budget,
                  std::string* why);

}  // namespace etc::fuzz
