#pragma once
// Differential check for XNNPACK delegation: every node of a program goes to
// XNNPACK, and the delegated program's outputs match the portable run
// (max |diff| / max |ref| <= tolerance) in each of the given run options.
// Inputs are seeded, uniform in [lo, hi].

#include <vector>

#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "tests/support/backend_differential.h"

namespace etc::testing {

struct XnnpackCheck {
  float lo = -2.0f, hi = 2.0f;
  float tolerance = 1e-5f;
  std::vector<CompileSpec> specs;
  bool one_partition = false;  // the whole graph in a single delegate
  std::vector<RuntimeOptions> runs = {RuntimeOptions{}};
};

inline void check_xnnpack_matches_portable(const ir::ExportedProgram& program, const XnnpackCheck& c = {}) {
  check_backend_matches_portable(program, xnnpack::XnnpackPartitioner(c.specs),
                                 &xnnpack::XnnpackPartitioner::is_supported,
                                 BackendCheck{c.lo, c.hi, c.tolerance, c.one_partition, c.runs});
}

}  // namespace etc::testing
