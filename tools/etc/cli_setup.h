#pragma once
// What etc and etc-compiler share: the global options (-v, -q, the limits),
// the set-up they choose (logging, limits, registrations), running the chosen
// subcommand with its errors reported, and handing a command line on.
//
// Two executables because starting costs what is linked: `etc` runs and
// describes programs (run, info) without loading ONNX and protobuf (~3.4 ms
// of dynamic linking at every start here); every other command, and a run
// that reads TensorProto inputs, it hands to `etc-compiler` beside it, which
// has the whole CLI.

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tools/etc/commands.h"

namespace etc::cli {

using AddCommand = Action (*)(CLI::App&);

// The whole of a main(): the app with the global options and `commands`,
// parsed from the command line; set-up; the chosen subcommand's action,
// whose errors are printed as "error: ..." with kExitError. A NeedsCompiler
// from the action hands the command line to etc-compiler, unless this is
// it (`is_compiler`).
int run_app(int argc, char** argv, const std::vector<AddCommand>& commands, bool is_compiler);

// The subcommand a command line names: its first word that is neither a
// global option nor a global option's value ("" when there is none).
std::string subcommand_of(int argc, char** argv);

// Replaces this process with etc-compiler (the file beside this executable)
// on the same command line. Returns only on failure, with kExitError and a
// message naming the file looked for.
int hand_to_compiler(char** argv);

// Commands that import a model (preprocess, partition, debug) copy its
// weights on the way (protobuf, the IR, a backend's blob), and with 4 KiB
// pages the page faults of those copies were most of a large model's
// compile time (README). glibc's malloc
// runs them best with transparent huge pages for its mappings and a heap it
// keeps (GLIBC_TUNABLES glibc.malloc.hugetlb, mmap_threshold,
// trim_threshold, top_pad); tunables are read at start, so for such a
// command, unless GLIBC_TUNABLES is set already, this sets it and returns
// true: the caller then executes itself (or etc-compiler) anew.
bool set_compiling_allocator(int argc, char** argv);

// set_compiling_allocator, then this executable run anew on the same
// command line; returns when there was nothing to set or the run failed
// (the command then goes on as it is).
void restart_with_compiling_allocator(int argc, char** argv);

}  // namespace etc::cli
