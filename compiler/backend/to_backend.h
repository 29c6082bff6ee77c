#pragma once
// to_backend: lowers tagged partitions to their backends.
//
// Steps, in order (to_backend(program, partitioner)):
//   1. partition      run the partitioner on the program
//   2. validate       the partitioner changed nothing but delegation tags; only
//                     constants carry a value tag, never a graph input or a
//                     graph output; no call_delegate node is tagged; every tag
//                     has a DelegationSpec naming a backend with registered
//                     BackendDetails; each tag's nodes form one convex
//                     subgraph (else the error names a path that leaves the
//                     partition and re-enters it)
// Then tag by tag, in the order of each tag's first node:
//   3. extract        re-check convexity in the current graph (partitions
//                     lowered before are single nodes now, so two partitions
//                     that together would form a cycle are rejected); the
//                     tag's nodes become their own ExportedProgram: inputs are
//                     the values flowing in (untagged constants included),
//                     outputs the values read outside or returned; constants
//                     tagged with the tag move inside
//   4. preprocess     the backend's BackendDetails::preprocess; its errors are
//                     rethrown naming the tag and the backend
//   5. replace        the tag's nodes become one call_delegate node (a new
//                     debug handle, onnx_name = the tag) placed so the graph
//                     stays topologically ordered; a LoweredBackendModule
//                     keeps the processed bytes, compile specs, debug handle
//                     map and the original subgraph
// Finally the graph is compacted and verified.
//
// Errors throw CompileError naming the model file and the nodes involved
// ("'Conv_3' (Conv)", or "#3 (conv)" for nodes without an ONNX name).
// Partitioners may run one after another: nodes lowered earlier are opaque
// call_delegate nodes, and new delegates are appended after the old ones.

#include <span>
#include <string>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/partitioner.h"
#include "compiler/ir/graph.h"

namespace etc {

// Lowers the whole program to one backend under the tag "<backend_id>_whole":
// every edge node and every constant they read (unless it is a graph output)
// moves into it, so for a program without earlier delegates the result's
// graph is a single call_delegate node.
ir::ExportedProgram to_backend(const std::string& backend_id, const ir::ExportedProgram& program,
                               std::span<const CompileSpec> compile_specs);

// Lowers every partition the partitioner tags, in the program and in its
// control-flow bodies (lower_bodies).
ir::ExportedProgram to_backend(const ir::ExportedProgram& program, const Partitioner& partitioner);

// Partitions and lowers the control-flow bodies (If branches, loop bodies)
// of a program, at every depth, with the same partitioner: each body is a
// program of its own to the partitioner, so a delegate may sit inside a
// branch or a loop. Their delegates join the program's, with tags that name
// the node and body they sit in ("If_0/then/xnnpack_0").
void lower_bodies(ir::ExportedProgram& program, const Partitioner& partitioner);

// Gives each call_delegate node, in the program and its bodies, its
// partition's original nodes as its one body (inputs and outputs those of
// the call): the portable fallback a program keeps beside each delegate
// (`etc preprocess --fallback portable`), which the runtime runs when the
// backend is missing, unavailable or fails to initialise. Call it last:
// nothing lowers or rewrites a program after it.
void attach_fallbacks(ir::ExportedProgram& program);

// Lowers the tagged nodes of an already partitioned program (steps 2–5).
// `original` is the program the partitioner saw.
ir::ExportedProgram to_backend(const ir::ExportedProgram& original, const PartitionResult& result);

}  // namespace etc
