#pragma once
// PartitionReport: what `etc partition` shows. For every node, the backend
// and partition it goes to, or why it stays on the portable kernels; for
// every partition, its nodes and the tensors crossing its boundary; and the
// coverage (share of nodes and of estimated FLOPs that are delegated).

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backend/partitioner.h"

namespace etc {

struct NodeAssignment {
  ir::NodeId node = -1;  // in its graph: the main one, or the body `scope` names
  std::string scope;     // empty: the main graph; "If_0/then", "Loop_3/body": a control-flow body
  std::string onnx_name;
  std::string onnx_op_type;
  std::string edge_op;
  std::string tag;      // empty: portable kernels
  std::string backend;  // empty: portable kernels
  std::string reason;   // why not delegated (empty when delegated)
  int64_t flops = 0;
};

struct PartitionSummary {
  std::string scope;  // as NodeAssignment::scope
  std::string tag;
  std::string backend;
  std::vector<ir::NodeId> nodes;
  std::vector<std::string> inputs;   // tensors flowing in (untagged constants included)
  std::vector<std::string> outputs;  // tensors read after the partition
  size_t constants_moved_in = 0;
  size_t constant_bytes_moved_in = 0;
  int64_t flops = 0;
};

struct PartitionReport {
  std::string model;
  std::vector<std::string> backends;  // in the order they were applied
  std::vector<NodeAssignment> nodes;  // in execution order
  std::vector<PartitionSummary> partitions;
  size_t delegated_nodes = 0;
  int64_t delegated_flops = 0;
  int64_t total_flops = 0;

  double node_coverage() const;  // 0..1; 0 for an empty graph
  double flops_coverage() const;
};

PartitionReport make_partition_report(const PartitionResult& result,
                                      const std::vector<std::string>& backends);

// The report of a program and of its control-flow bodies, each partitioned
// on its own as lower_bodies (to_backend.h) does: body nodes follow the main
// graph's, with their scope; a body's partition tags are prefixed by it.
PartitionReport make_partition_report(const ir::ExportedProgram& program, const Partitioner& partitioner,
                                      const std::vector<std::string>& backends);

}  // namespace etc
