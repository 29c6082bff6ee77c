#pragma once
// The --input NAME=FILE and --random-inputs flags of `etc run` and
// `etc debug`: one tensor per program input, read from its file or, when
// allowed, filled with seeded random data.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "tools/etc/tensor_io.h"

namespace etc::cli {

struct ProgramInput {
  std::string name;
  TensorSpec spec;
};

struct LoadedInput {
  io::OwnedTensor tensor;
  std::string source;   // the file it was read from, or "random data"
  bool filled = false;  // random data written straight to random_into(i); `tensor` is empty
};

// Throws ToolError naming the flag, file or input: a malformed flag, an
// unknown input name, an input given twice, or (without `random_fill`) an
// input not given. Shapes and dtypes are checked by the caller's set_input,
// whose message should name `source`. Inputs named in `supplied` come from
// elsewhere (--chunks): they are left empty, with an empty source. With
// `random_into`, random data for input i goes straight where it returns
// (input i's memory, of its spec), not into a tensor of its own: a large
// image is then neither allocated twice nor copied.
std::vector<LoadedInput> load_inputs(const std::vector<std::string>& flags,
                                     const std::vector<ProgramInput>& inputs, bool random_fill,
                                     const std::string& program_name,
                                     const std::set<std::string>& supplied = {},
                                     const std::function<void*(size_t)>& random_into = {});

// The thread count to run with for --threads N: N, but at most the cores
// this machine has (with a warning when it cuts): threads beyond them only
// wait on each other (512 threads on 2 cores turned a 0.07 s run into 20 s).
// 0 stays 0 (one per core).
int usable_threads(int requested);

}  // namespace etc::cli
