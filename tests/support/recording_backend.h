#pragma once
// RecordingBackend: a BackendDetails for tests. It records what each
// preprocess call was given (the partition's shape, compile specs and the
// whole sub-program) and returns deterministic results: the partition printed
// as text as processed bytes, and an int debug map (identifier i → node i's
// debug handles).
//
//   register_recording_backends();             // once per process is enough
//   recordings("recording_a").clear();
//   ... to_backend(...) ...
//   CHECK(recordings("recording_a")[0].node_ops == std::vector<std::string>{"mul", "add"});

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/backend/backend_details.h"
#include "compiler/ir/printer.h"

namespace etc::testing {

inline constexpr char kRecordingA[] = "recording_a";
inline constexpr char kRecordingB[] = "recording_b";

struct RecordedPartition {
  std::vector<std::string> node_ops;        // edge op names, graph order
  std::vector<std::string> onnx_names;      // meta.onnx_name, graph order
  std::vector<std::string> input_names;     // graph inputs
  std::vector<std::string> output_names;    // graph outputs
  std::vector<std::string> constant_names;  // constants of the partition
  std::vector<CompileSpec> compile_specs;
  std::shared_ptr<const ir::ExportedProgram> program;
};

// What a backend id's preprocess received, in call order (process-global).
inline std::vector<RecordedPartition>& recordings(const std::string& backend_id) {
  static std::map<std::string, std::vector<RecordedPartition>> all;
  return all[backend_id];
}

// The processed bytes RecordingBackend returns for a partition.
inline std::vector<uint8_t> recording_bytes(const ir::ExportedProgram& partition) {
  const std::string text = ir::print(partition.graph);
  return std::vector<uint8_t>(text.begin(), text.end());
}

class RecordingBackend : public BackendDetails {
 public:
  explicit RecordingBackend(std::string backend_id) : backend_id_(std::move(backend_id)) {}

  PreprocessResult preprocess(const ir::ExportedProgram& partition,
                              std::span<const CompileSpec> compile_specs) const override {
    const ir::Graph& g = partition.graph;
    RecordedPartition r;
    IntDelegateDebugMap map;
    for (const ir::Node& n : g.nodes()) {
      if (n.dead) continue;
      r.node_ops.emplace_back(edge_op_name(n.op));
      r.onnx_names.push_back(n.meta.onnx_name);
      map[static_cast<int64_t>(map.size())] = n.meta.debug_handles;
    }
    for (ir::ValueId v : g.inputs()) r.input_names.push_back(g.value(v).name);
    for (ir::ValueId v : g.outputs()) r.output_names.push_back(g.value(v).name);
    for (const ir::Value& v : g.values())
      if (v.is_constant()) r.constant_names.push_back(v.name);
    r.compile_specs.assign(compile_specs.begin(), compile_specs.end());
    r.program = std::make_shared<const ir::ExportedProgram>(partition);
    recordings(backend_id_).push_back(std::move(r));
    return PreprocessResult{recording_bytes(partition), map};
  }

 private:
  std::string backend_id_;
};

// Registers RecordingBackend as kRecordingA and kRecordingB (once).
inline void register_recording_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend_details(kRecordingA, std::make_unique<RecordingBackend>(kRecordingA));
    register_backend_details(kRecordingB, std::make_unique<RecordingBackend>(kRecordingB));
  });
}

}  // namespace etc::testing
