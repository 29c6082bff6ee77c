#pragma once
// Which backend runs each node when several could: the plan a cost-based
// CompositePartitioner follows.
//
// The cost of a plan, in estimated seconds, is
//   sum over nodes:      FLOPs (at least one per output element) x the
//                        backend's relative cost for the node
//                        (Partitioner::relative_cost) / kFlopsPerSecond
//                        (ten times that on portable kernels)
//   sum over boundaries: for each value, one crossing per partition (or the
//                        portable kernels, the program's outputs included)
//                        reading it other than its producer's:
//                        bytes / kBoundaryBytesPerSecond (the layout
//                        conversion at each delegate edge) +
//                        kBoundarySeconds (a delegate call).
// Partitions are the plan's real ones (propose_partitions per backend, in
// order, each convex with the ones before), so a backend's nodes split by
// another backend's node in between count as two partitions.
// Steps of assign_backends:
//   1. start from the priority plan (each node to the first backend that
//      takes it), and again from each backend put first; keep the cheapest
//      result of 2-3;
//   2. partition the plan;
//   3. move the partition whose move to another backend that takes all its
//      nodes lowers the cost most; back to 2 until no move does.
// A move never gives a node to a backend that did not take it when
// partitioning the whole program alone. Each step 3 tries partitions x
// backends plans, and each accepted move removes a partition.

#include <vector>

#include "compiler/ir/graph.h"

namespace etc {

inline constexpr double kFlopsPerSecond = 1e11;
inline constexpr double kBoundaryBytesPerSecond = 5e9;
inline constexpr double kBoundarySeconds = 5e-6;

struct BackendChoices {
  // takes[b][node]: backend b tagged the node when partitioning alone.
  std::vector<std::vector<bool>> takes;
  // cost[b][node]: the backend's relative cost for the node (1: typical).
  std::vector<std::vector<double>> cost;
};

// The backend index of each node (by node id), -1 for nodes none takes.
std::vector<int> assign_backends(const ir::ExportedProgram& program, const BackendChoices& choices);

// The estimated cost of a plan (seconds), for reports and tests.
double plan_cost(const ir::ExportedProgram& program, const BackendChoices& choices,
                 const std::vector<int>& plan);

}  // namespace etc
