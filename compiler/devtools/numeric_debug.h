#pragma once
// Numeric debugging (`etc debug`): run a delegated program and the
// portable-only program of the same model on the same inputs, both logging
// intermediate outputs, and compare them ONNX node by ONNX node.
//
// Joining: every logged output is keyed by the ONNX node whose output it is.
// An instruction's output belongs to the instruction's debug handles; a
// delegate node's output to the handles of its entry in the delegate's debug
// handle map (exact identifier match). Several fused ONNX nodes produce the
// output of the last of them: the key is the largest handle, since handles
// follow the ONNX graph's topological order. When a key has several outputs
// on both sides (a Split), they pair up in order if the counts agree; else
// the last outputs of each side are compared.
//
// Errors: CompileError naming the program and the reason (a failed init or
// execute, an input that does not fit).

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/devtools/etdump_reader.h"
#include "runtime/backend/options.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/program.h"

namespace etc::devtools {

struct InputTensor {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
};

// Runs `program` once with `inputs` (one per program input, in order) and an
// EventRecorder logging every intermediate output, and returns what it
// recorded as a parsed ETDump.
Etdump record_intermediate_outputs(const Program& program, const std::vector<InputTensor>& inputs,
                                   RuntimeOptions options);

struct NodeGap {
  int32_t handle = -1;  // the ONNX node (largest handle of its output's key)
  std::string onnx_name, onnx_op_type;
  // Every ONNX node the output stands for, in graph order (several when
  // nodes were fused: "conv_1", "relu_1"); the last is onnx_name.
  std::vector<std::string> covers;
  std::string placement;  // "portable" or the test side's backend id
  std::vector<int64_t> shape;
  bool compared = false;
  std::string note;  // why not compared
  double max_abs_error = 0;
  double relative_error = 0;                                // max |ref - test| / max |ref|
  double snr_db = std::numeric_limits<double>::infinity();  // 10 log10(Σref² / Σ(ref-test)²)
};

struct GapReport {
  std::vector<NodeGap> nodes;  // in the test program's execution order
  double tolerance = 0;
  int first_over = -1;  // index in nodes of the first over the tolerance, -1: none
  // Delegates of the test program that logged no intermediate output
  // ("delegate 0 (xnnpack)"): their nodes could not be compared.
  std::vector<std::string> silent_delegates;
  size_t num_compared() const;
};

// `tolerance` bounds relative_error.
GapReport compare_intermediate_outputs(const Program& reference, const Etdump& reference_dump,
                                       const Program& test, const Etdump& test_dump, double tolerance);

}  // namespace etc::devtools
