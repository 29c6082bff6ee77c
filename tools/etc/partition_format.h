#pragma once
// Renders a PartitionReport as text (for people), JSON (for scripts; schema in
// docs/partition-report.md) or Graphviz DOT (partitions as coloured clusters).

#include <string>

#include "compiler/backend/partition_report.h"

namespace etc::cli {

std::string format_partition_text(const PartitionReport& report);
std::string format_partition_json(const PartitionReport& report);
// `graph` is the tagged graph the report was made from (for edges).
std::string format_partition_dot(const PartitionReport& report, const ir::Graph& graph);

}  // namespace etc::cli
