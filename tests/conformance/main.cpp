// etc_conformance: runs the ONNX backend tests through compile + run.
//
//   etc_conformance [--data DIR] [--filter SUBSTR] [--expected FILE] [--write-expected FILE]
//                   [--report FILE.md] [--json FILE] [--mode MODE]... [-v]
//
// Each test compiles once and runs in every --mode (default: portable):
// "portable"; a backend, or several in priority order ("xnnpack",
// "onednn,xnnpack"), for which the model is partitioned and lowered before
// it runs; "runtime-delegate:xnnpack", the portable program with XNNPACK
// taken at load time. Every test in --expected must pass in every mode.
//
// Exit status is non-zero when a test listed in --expected does not pass, or
// when any in-scope test fails at run time or crashes (those must be rejected
// at compile time instead).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "partitioners/register.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/conformance/conformance.h"

namespace fs = std::filesystem;
using etc::conformance::Outcome;
using etc::conformance::TestResult;

namespace {

struct Counts {
  int passed = 0, failed = 0, rejected = 0, crashed = 0;
  int total() const { return passed + failed + rejected + crashed; }
};

void add(Counts& c, Outcome o) {
  if (o == Outcome::Passed)
    ++c.passed;
  else if (o == Outcome::Failed)
    ++c.failed;
  else if (o == Outcome::Rejected)
    ++c.rejected;
  else if (o == Outcome::Crashed)
    ++c.crashed;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Prints one mode's per-op and per-folder tables (and, with -v, every
// test that did not pass), adds them to `md` when given; the mode's counts.
Counts report(const etc::conformance::Mode& mode, const std::vector<TestResult>& results, bool verbose,
              std::ofstream* md) {
  std::map<std::string, Counts> per_folder, per_op;
  std::map<std::string, std::string> op_example_reason;
  int with_delegates = 0, delegates = 0;
  std::cout << "\n== mode " << mode.name << "\n";
  for (const TestResult& r : results) {
    if (r.mode != mode.name || r.outcome == Outcome::OutOfScope) continue;
    add(per_folder[r.folder], r.outcome);
    for (const std::string& op : r.op_types) {
      add(per_op[op], r.outcome);
      if (r.outcome != Outcome::Passed && !op_example_reason.count(op))
        op_example_reason[op] = r.name + ": " + first_line(r.reason);
    }
    if (r.outcome == Outcome::Passed && r.delegates > 0) ++with_delegates, delegates += r.delegates;
    if (verbose && r.outcome != Outcome::Passed)
      std::cout << "  " << etc::conformance::outcome_name(r.outcome) << "  " << r.folder << "/" << r.name
                << ": " << first_line(r.reason) << "\n";
  }
  std::cout << std::left;
  std::printf("%-24s %7s %7s %9s %8s\n", "op", "passed", "failed", "rejected", "crashed");
  for (const auto& [op, c] : per_op)
    std::printf("%-24s %7d %7d %9d %8d\n", op.c_str(), c.passed, c.failed, c.rejected, c.crashed);
  std::printf("\n%-24s %7s %7s %9s %8s %7s\n", "folder", "passed", "failed", "rejected", "crashed", "pass%");
  Counts all;
  for (const auto& [folder, c] : per_folder) {
    std::printf("%-24s %7d %7d %9d %8d %6.1f%%\n", folder.c_str(), c.passed, c.failed, c.rejected, c.crashed,
                c.total() ? 100.0 * c.passed / c.total() : 0.0);
    all.passed += c.passed, all.failed += c.failed, all.rejected += c.rejected, all.crashed += c.crashed;
  }
  std::printf("%-24s %7d %7d %9d %8d %6.1f%%\n", "all in scope", all.passed, all.failed, all.rejected,
              all.crashed, all.total() ? 100.0 * all.passed / all.total() : 0.0);
  if (!mode.backends.empty() || !mode.runtime_delegate.empty())
    std::printf(
        "%d passing test(s) ran %d delegate call(s) or load-time delegated range(s) on the requested "
        "backends\n",
        with_delegates, delegates);
  if (md != nullptr) {
    *md << "\n## Mode " << mode.name
        << "\n\n| ONNX op | passed | failed | rejected | crashed | example of a non-passing test "
           "|\n|---|---|---|---|---|---|\n";
    for (const auto& [op, c] : per_op)
      *md << "| " << op << " | " << c.passed << " | " << c.failed << " | " << c.rejected << " | " << c.crashed
          << " | " << (op_example_reason.count(op) ? op_example_reason[op] : "") << " |\n";
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run the ONNX backend conformance suite through etc"};
  std::string data = "/usr/share/libonnx-testdata/data";
  std::string filter, expected_path, write_expected, report_path, json_path;
  bool verbose = false;
  etc::conformance::RunOptions options;
  app.add_option("--data", data, "Root of the ONNX test data");
  app.add_option("--filter", filter, "Only tests whose name contains this");
  app.add_option("--expected", expected_path, "File listing tests that must pass");
  app.add_option("--write-expected", write_expected, "Write the passing tests to this file");
  app.add_option("--report", report_path, "Write a Markdown per-op table");
  app.add_option("--json", json_path, "Write every result as JSON");
  app.add_flag("-v,--verbose", verbose, "Print every non-passing test with its reason");
  std::vector<std::string> mode_names;
  app.add_option("--mode", mode_names,
                 "portable | BACKEND[,BACKEND...] | runtime-delegate:xnnpack (repeatable; default portable)");
  CLI11_PARSE(app, argc, argv);
  if (mode_names.empty()) mode_names.push_back("portable");
  try {
    for (const std::string& m : mode_names) {
      if (std::count(mode_names.begin(), mode_names.end(), m) > 1)
        throw std::invalid_argument("mode '" + m + "' given twice");
      options.modes.push_back(etc::conformance::parse_mode(m));
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "--mode: " << e.what() << "\n";
    return 2;
  }
  etc::register_builtin_partitioners();
  etc::register_builtin_preprocessors();
  if (etc::Status s = etc::register_builtin_backends(); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 2;
  }

  std::vector<TestResult> results;
  for (const char* folder : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    const fs::path root = fs::path(data) / folder;
    if (!fs::is_directory(root)) continue;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& d : dirs) {
      if (!filter.empty() && d.filename().string().find(filter) == std::string::npos) continue;
      for (TestResult& r : etc::conformance::run_test(folder, d.string(), options))
        results.push_back(std::move(r));
    }
  }

  std::ofstream md;
  if (!report_path.empty()) md.open(report_path);
  Counts all;
  for (const etc::conformance::Mode& mode : options.modes) {
    const Counts c = report(mode, results, verbose, report_path.empty() ? nullptr : &md);
    all.passed += c.passed, all.failed += c.failed, all.rejected += c.rejected, all.crashed += c.crashed;
  }
  if (!json_path.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const TestResult& r : results)
      j.push_back({{"folder", r.folder},
                   {"test", r.name},
                   {"mode", r.mode},
                   {"ops", r.op_types},
                   {"outcome", etc::conformance::outcome_name(r.outcome)},
                   {"reason", r.reason},
                   {"delegates", r.delegates}});
    std::ofstream(json_path) << j.dump(1) << "\n";
  }
  if (!write_expected.empty()) {
    // The tests that pass in the first mode.
    std::ofstream out(write_expected);
    for (const TestResult& r : results)
      if (r.mode == options.modes.front().name && r.outcome == Outcome::Passed)
        out << r.folder << "/" << r.name << "\n";
  }

  int status = 0;
  if (!expected_path.empty()) {
    std::ifstream in(expected_path);
    if (!in) {
      std::cerr << expected_path << ": cannot read\n";
      return 2;
    }
    std::set<std::string> expected;
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') expected.insert(line);
    int regressions = 0;
    for (const TestResult& r : results)
      if (expected.count(r.folder + "/" + r.name) && r.outcome != Outcome::Passed) {
        std::cerr << "REGRESSION: " << r.folder << "/" << r.name << " used to pass; in mode " << r.mode
                  << ": " << etc::conformance::outcome_name(r.outcome) << ", " << first_line(r.reason)
                  << "\n";
        ++regressions;
      }
    // A listed test the data no longer holds (renamed, or its folder not
    // found) would otherwise pass unnoticed; with --filter only some run.
    if (filter.empty()) {
      std::set<std::string> ran;
      for (const TestResult& r : results) ran.insert(r.folder + "/" + r.name);
      for (const std::string& name : expected)
        if (!ran.count(name)) {
          std::cerr << "REGRESSION: " << name << " used to pass; it was not found under the data\n";
          ++regressions;
        }
    }
    if (regressions) status = 1;
  }
  if (all.failed + all.crashed > 0) {
    std::cerr
        << all.failed + all.crashed
        << " in-scope test run(s) failed at run time or crashed; they must pass or be rejected at compile "
           "time\n";
    status = 1;
  }
  return status;
}
