#pragma once
// The ONNX backend conformance suite, run through compile + run.

#include <string>
#include <vector>

namespace etc::conformance {

enum class Outcome { Passed, Failed, Rejected, Crashed, OutOfScope };
const char* outcome_name(Outcome o);

// One way to run a test's program: on the portable kernels ("portable"),
// partitioned for backends and lowered ("xnnpack", "onednn,xnnpack": in
// priority order), or the portable program with a load-time delegate
// ("runtime-delegate:xnnpack").
struct Mode {
  std::string name;
  std::vector<std::string> backends;
  std::string runtime_delegate;
};
// Parses a --mode value; throws std::invalid_argument naming what is wrong.
Mode parse_mode(const std::string& text);

struct TestResult {
  std::string folder;  // node, simple, ...
  std::string name;    // test_add
  std::string mode;    // Mode::name
  std::vector<std::string> op_types;
  Outcome outcome = Outcome::Failed;
  std::string reason;  // rejection message or mismatch description
  int delegates = 0;   // call_delegate instructions, or load-time delegated ranges
};

struct RunOptions {
  double rtol = 1e-3;
  double atol = 1e-5;
  std::vector<Mode> modes;
};

// The op types issue-level scope covers; tests using anything else are out of scope.
bool in_scope(const std::string& op_type);

// Compiles one test directory once and runs it in every mode, in a child
// process (a crash is a result, not the end of the run: the mode that
// crashed is reported so, and the modes after it run in a new child). One
// result per mode, in the order of options.modes.
std::vector<TestResult> run_test(const std::string& folder, const std::string& dir,
                                 const RunOptions& options);

}  // namespace etc::conformance
