#pragma once
// The ONNX backend conformance suite, run through compile + run.

#include <string>
#include <vector>

namespace etc::conformance {

enum class Outcome { Passed, Failed, Rejected, Crashed, OutOfScope };
const char* outcome_name(Outcome o);

struct TestResult {
  std::string folder;  // node, simple, ...
  std::string name;    // test_add
  std::vector<std::string> op_types;
  Outcome outcome = Outcome::Failed;
  std::string reason;  // rejection message or mismatch description
  int delegates = 0;   // call_delegate instructions in the compiled program
};

struct RunOptions {
  double rtol = 1e-3;
  double atol = 1e-5;
  // Partition with these backends (in priority order) and lower before running.
  std::vector<std::string> backends;
  // Load the portable program with this load-time delegate ("xnnpack").
  std::string runtime_delegate;
};

// The op types issue-level scope covers; tests using anything else are out of scope.
bool in_scope(const std::string& op_type);

// Compiles and runs one test directory in a child process (a crash is a result,
// not the end of the run).
TestResult run_test(const std::string& folder, const std::string& dir, const RunOptions& options);

}  // namespace etc::conformance
