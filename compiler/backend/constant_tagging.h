#pragma once
// Tagging constants so they move into the delegate that reads them.
//
// A constant whose every reader carries the same tag takes that tag. A
// constant read by nodes of two or more partitions is duplicated (one copy
// per partition, sharing the same bytes) — or, when copies are not allowed,
// rejected with a CompileError naming the constant and the tags. A constant
// also read by an untagged node or a graph output keeps a copy outside too.
// Untagged constants reach delegates as inputs.
//
// Only constants with at least `min_bytes` bytes are considered (0: all).

#include <cstddef>

#include "compiler/ir/graph.h"

namespace etc {

struct ConstantTaggingOptions {
  bool allow_copies = true;
  size_t min_bytes = 0;
};

void tag_constant_data(ir::ExportedProgram& program, const ConstantTaggingOptions& options = {});

}  // namespace etc
