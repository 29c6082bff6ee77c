#pragma once
// Tagging constants so they move into the delegate that reads them.
//
// A constant whose every reader carries the same tag takes that tag. A
// constant read by nodes of two or more partitions is duplicated (one copy
// per partition, sharing the same ConstantData and spec, named
// "<name>#<tag>", each partition's readers rewired to theirs) — or, when
// copies are not allowed, rejected with a CompileError naming the constant,
// the tags and the readers. A constant also read by an untagged node (or a
// call_delegate node) or that is a graph output keeps its untagged original
// for those readers; when nothing outside reads it, the original goes to the
// first tag (in name order) and keeps its name. With allow_copies false, a
// constant read by one partition and by outside readers stays untagged.
// Untagged constants reach delegates as inputs.
//
// Only constants with at least `min_bytes` bytes are considered (0: all).
// Constants already tagged are left alone; no node is added or removed.

#include <cstddef>

#include "compiler/ir/graph.h"

namespace etc {

struct ConstantTaggingOptions {
  bool allow_copies = true;
  size_t min_bytes = 0;
};

void tag_constant_data(ir::ExportedProgram& program, const ConstantTaggingOptions& options = {});

}  // namespace etc
