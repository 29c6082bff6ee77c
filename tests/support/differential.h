#pragma once
// Differential check for passes: a program before and after a pass gives the
// same float outputs on the same inputs (within `tolerance`, relative and absolute).

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/support/run_program.h"

namespace etc::testing {

inline void check_same_float_outputs(const ir::ExportedProgram& before, const ir::ExportedProgram& after,
                                     const std::vector<std::vector<uint8_t>>& inputs, double tolerance) {
  const auto want = run_program(before, inputs);
  const auto got = run_program(after, inputs);
  REQUIRE(want.size() == got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const auto w = from_bytes<float>(want[o]);
    const auto g = from_bytes<float>(got[o]);
    REQUIRE(w.size() == g.size());
    for (size_t i = 0; i < w.size(); ++i) CHECK(g[i] == Approx(w[i]).margin(tolerance).epsilon(tolerance));
  }
}

// The same, with the metric of the real-model tests: for each output,
// max |after - before| <= relative * max |before|.
// `options` apply to `after`'s run (thread count, delegate detail).
inline void check_close_float_outputs(const ir::ExportedProgram& before, const ir::ExportedProgram& after,
                                      const std::vector<std::vector<uint8_t>>& inputs, float relative,
                                      const RuntimeOptions& options = {}) {
  const auto want = run_program(before, inputs);
  const auto got = run_program(after, inputs, options);
  REQUIRE(want.size() == got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const auto w = from_bytes<float>(want[o]);
    const auto g = from_bytes<float>(got[o]);
    REQUIRE(w.size() == g.size());
    float max_ref = 0.0f, max_diff = 0.0f;
    for (size_t i = 0; i < w.size(); ++i) {
      max_ref = std::max(max_ref, std::fabs(w[i]));
      max_diff = std::max(max_diff, std::fabs(g[i] - w[i]));
    }
    INFO("output " << o << ": max |diff| " << max_diff << ", max |ref| " << max_ref);
    CHECK(max_diff <= relative * std::max(max_ref, 1e-30f));
  }
}

}  // namespace etc::testing
