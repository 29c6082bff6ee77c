#pragma once
// Differential check for a backend: every node of a program goes to the
// backend's partitioner, and the delegated program's outputs match the
// portable run (max |diff| / max |ref| <= tolerance) in each of the given
// run options. Inputs are seeded, uniform in [lo, hi].

#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "compiler/backend/capability_partitioner.h"
#include "compiler/backend/to_backend.h"
#include "partitioners/register.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/differential.h"
#include "tests/support/random.h"

namespace etc::testing {

struct BackendCheck {
  float lo = -2.0f, hi = 2.0f;
  float tolerance = 1e-5f;
  bool one_partition = false;  // the whole graph in a single delegate
  std::vector<RuntimeOptions> runs = {RuntimeOptions{}};
};

inline void check_backend_matches_portable(const ir::ExportedProgram& program, const Partitioner& partitioner,
                                           const NodeSupport& is_supported, const BackendCheck& c) {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  for (const ir::Node& n : program.graph.nodes()) {
    const Support s = is_supported(program.graph, n);
    INFO(edge_op_name(n.op) << ": " << s.reason);
    REQUIRE(s.supported);
  }
  std::vector<std::vector<uint8_t>> inputs;
  uint32_t seed = 3;
  for (ir::ValueId v : program.graph.inputs()) {
    std::mt19937 rng(seed++);
    inputs.push_back(as_bytes(random_floats(program.graph.value(v).spec.shape.numel(), rng, c.lo, c.hi)));
  }
  const ir::ExportedProgram lowered = to_backend(program, partitioner);
  REQUIRE(!lowered.delegates.empty());
  if (c.one_partition) REQUIRE(lowered.delegates.size() == 1);
  for (const ir::Node& n : lowered.graph.nodes()) REQUIRE((n.dead || n.is_delegate_call()));
  for (RuntimeOptions options : c.runs) {
    INFO("threads " << options.num_threads << ", detail " << static_cast<int>(options.delegate_detail));
    // A run is of the threads it names: test graphs are too small for a
    // delegate to keep them otherwise (RuntimeOptions::fit_threads_to_work).
    options.fit_threads_to_work = false;
    check_close_float_outputs(program, lowered, inputs, c.tolerance, options);
  }
}

}  // namespace etc::testing
