#pragma once
// What plan_stages (stages.h) works on: the delegate's graph as the plan
// sees it — who produces and how many read each tensor, which nodes run
// natively — and the folds it applies (stage_folds.cpp), each of which
// takes nodes into a native node's epilogue or stage (StagePlan's
// writes_into, input_scale, expands_into), elides them and records where
// they went (folded_into). They run in the order plan_stages calls them.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"

namespace etc::xnnpack {

const fb::Node& node_at(const BlobView& view, size_t n);

// x * sigmoid(x) written as Sigmoid(x) -> s and Multiply(x, s) (either
// order), s read by nothing else, no output clamp on the multiply, no
// broadcasting.
struct SwishPattern {
  size_t sigmoid = 0, multiply = 0;
  uint32_t x = 0, y = 0;
};

// What the passes below share: who produces and how many read each tensor,
// and which nodes run natively.
struct Graph {
  Graph(const BlobView& v, NativeConvolutions c) : view(v), convolutions(c) {}
  const BlobView& view;
  NativeConvolutions convolutions;
  size_t num_nodes = 0, num_tensors = 0;
  std::vector<int64_t> producer, readers;
  // Per tensor: the last node that reads it (its reader when readers is 1),
  // -1 when none.
  std::vector<int64_t> reader;
  std::vector<SwishPattern> swishes;
  std::vector<bool> native;
  // Candidate (pointwise convolution, depthwise convolution) pairs for
  // stream_expansions; their depthwise convolutions are native.
  std::vector<std::pair<size_t, size_t>> expansions;

  const fb::Node& node(size_t n) const { return node_at(view, n); }
};

// The graph of `view`, with the nodes that run natively under `convolutions`
// (and the expansions worth streaming into a depthwise convolution).
Graph analyse(const BlobView& view, NativeConvolutions convolutions);

// A ChannelScale only a native convolution reads: scales its weights per run.
void fold_input_scales(const Graph& g, StagePlan& plan);
// x * sigmoid(x): in a native convolution's epilogue, or one native pass.
void fold_swishes(Graph& g, StagePlan& plan);
// A HardSwish of a native convolution's output: in its epilogue.
void fold_hardswishes(Graph& g, StagePlan& plan);
// A residual Add: in the epilogue of the native convolution before it.
void fold_residual_adds(const Graph& g, StagePlan& plan);
// An Add of a native nearest resize's output: in the resize.
void fold_resize_adds(const Graph& g, StagePlan& plan);
// A scalar multiply and add after a native convolution: in its epilogue.
void fold_output_affines(const Graph& g, StagePlan& plan);
// Native convolutions store straight into a channel concatenation.
void concatenate_in_place(const Graph& g, StagePlan& plan);
// An expansion and the depthwise convolution it feeds: one stage.
void stream_expansions(const Graph& g, StagePlan& plan);

}  // namespace etc::xnnpack
