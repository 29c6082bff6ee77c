#pragma once
// Partitioner: decides which edge nodes a backend will own.
//
// A partitioner reads an ExportedProgram and returns a copy in which every
// node it hands to a backend carries `meta.delegation_tag` (and every constant
// that should move into the delegate carries `Value::delegation_tag`), plus
// one DelegationSpec per tag. It tags; it never adds, removes or rewires
// nodes (to_backend rejects a result whose graph differs from its input). The
// one change allowed is tag_constant_data's: a constant read by several
// partitions may get one copy (same bytes) per partition, whose nodes then
// read their own copy.
// Every node it leaves untagged gets a human-readable reason, shown by
// `etc partition`.
//
// Nodes that are already call_delegate nodes (from an earlier to_backend) are
// opaque: a partitioner must leave them untagged.
//
// Errors: throw CompileError naming the model file, node and reason.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/compile_spec.h"
#include "compiler/ir/graph.h"

namespace etc {

struct PartitionResult {
  ir::ExportedProgram tagged_exported_program;
  std::map<std::string, DelegationSpec> partition_tags;  // tag → backend + specs
  std::map<ir::NodeId, std::string> rejection_reasons;   // untagged node → why
};

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  // Short name used on the command line ("demo", "xnnpack").
  virtual std::string name() const = 0;
  virtual PartitionResult partition(const ir::ExportedProgram& program) const = 0;
  // How costly this backend estimates a node it takes, relative to a
  // typical backend (1.0: the XNNPACK backend, the others measured against
  // it); below 1 where it runs the node faster. A CompositePartitioner
  // planning by cost weighs backends by it.
  virtual double relative_cost(const ir::Graph& /*graph*/, const ir::Node& /*node*/) const { return 1.0; }
};

// Partitioners by name, for the CLI. Built-in ones are registered by
// register_builtin_partitioners() (partitioners/register.h).
using PartitionerFactory = std::function<std::unique_ptr<Partitioner>(std::vector<CompileSpec>)>;
// Throws CompileError when `name` is empty or already registered, or the
// factory is empty. Safe to call from several threads.
void register_partitioner(const std::string& name, PartitionerFactory factory);
// Throws CompileError naming `name` and the registered partitioners when it
// is unknown, or when the factory returns no partitioner.
std::unique_ptr<Partitioner> make_partitioner(const std::string& name, std::vector<CompileSpec> specs = {});
std::vector<std::string> registered_partitioners();  // sorted

}  // namespace etc
