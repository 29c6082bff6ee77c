#pragma once
// to_backend: lowers tagged partitions to their backends.
//
// Steps, in order (to_backend(program, partitioner)):
//   1. partition      run the partitioner on the program
//   2. validate       the partitioner did not change the graph; no graph
//                     input or output is tagged as a node; every tag has a
//                     DelegationSpec naming a known backend; each tag's nodes
//                     form one convex subgraph (else the error names a path
//                     that leaves the partition and re-enters it)
//   3. extract        each tag becomes its own ExportedProgram: inputs are the
//                     values flowing in (untagged constants included), outputs
//                     the values read outside; tagged constants move inside
//   4. preprocess     the backend's BackendDetails::preprocess
//   5. replace        the tag's nodes become one call_delegate node with a new
//                     debug handle; the LoweredBackendModule keeps the
//                     original subgraph
//
// Errors throw CompileError naming the nodes involved. Partitioners may run
// one after another: nodes lowered earlier are opaque call_delegate nodes.

#include <span>
#include <string>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/partitioner.h"
#include "compiler/ir/graph.h"

namespace etc {

// Lowers the whole program to one backend: the result's graph is a single
// call_delegate node.
ir::ExportedProgram to_backend(const std::string& backend_id, const ir::ExportedProgram& program,
                               std::span<const CompileSpec> compile_specs);

// Lowers every partition the partitioner tags.
ir::ExportedProgram to_backend(const ir::ExportedProgram& program, const Partitioner& partitioner);

// Lowers the tagged nodes of an already partitioned program (steps 2–5).
// `original` is the program the partitioner saw.
ir::ExportedProgram to_backend(const ir::ExportedProgram& original, const PartitionResult& result);

}  // namespace etc
