#pragma once
// ProgramBytes: hand-builds small program files for runtime tests, down to
// the delegate table, without the compiler. Values are placed one after the
// other in the arena (no reuse); constants share segment 0; a delegate's
// processed bytes are inline or in a segment of their own.
//
//   ProgramBytes p;
//   const int x = p.input("x", {2, 3});
//   const int y = p.output("y", {2, 3});
//   p.call_delegate(p.delegate("demo", blob), {x}, {y});
//   const std::vector<uint8_t> bytes = p.build();
//
// Indices are not checked here, so tests can build defective programs too.

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/result.h"
#include "runtime/executor/file_data.h"
#include "runtime/executor/program.h"
#include "runtime/schema/program_generated.h"

namespace etc::testing {

class ProgramBytes {
 public:
  // Where a delegate's processed bytes go; Both and Neither make bad programs.
  enum class Placement { Inline, Segment, Both, Neither };

  int input(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::Float32) {
    return add_value(name, std::move(shape), dtype, fb::ValueKind::Input);
  }
  int output(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::Float32) {
    return add_value(name, std::move(shape), dtype, fb::ValueKind::Output);
  }
  int activation(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::Float32) {
    return add_value(name, std::move(shape), dtype, fb::ValueKind::Activation);
  }
  int constant(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& data) {
    const int id = add_value(name, std::move(shape), DType::Float32, fb::ValueKind::Constant);
    values_[static_cast<size_t>(id)].segment_offset = align(constants_.size());
    constants_.resize(align(constants_.size()));
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    constants_.insert(constants_.end(), bytes, bytes + data.size() * sizeof(float));
    return id;
  }

  // Returns the delegate index.
  int delegate(const std::string& backend_id, const std::string& processed,
               std::vector<std::pair<std::string, std::string>> compile_specs = {},
               Placement placement = Placement::Inline) {
    delegates_.push_back(Delegate{backend_id, processed, std::move(compile_specs), placement});
    return static_cast<int>(delegates_.size() - 1);
  }
  void call_delegate(int delegate, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                     std::vector<int32_t> debug_handles = {}) {
    instructions_.push_back(Call{true,
                                 static_cast<uint32_t>(delegate),
                                 {},
                                 std::move(inputs),
                                 std::move(outputs),
                                 std::move(debug_handles)});
  }
  // `op` is an edge op name, e.g. "add" or "relu"; integer attributes only.
  void call_kernel(const std::string& op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                   std::vector<int32_t> debug_handles = {},
                   std::vector<std::pair<std::string, int64_t>> int_attrs = {}) {
    instructions_.push_back(Call{false, 0, op, std::move(inputs), std::move(outputs),
                                 std::move(debug_handles), std::move(int_attrs)});
  }
  // Debug info: the ONNX node behind a debug handle.
  void debug_handle(int32_t handle, const std::string& onnx_name, const std::string& onnx_op_type) {
    debug_infos_.push_back(DebugInfo{handle, onnx_name, onnx_op_type});
  }
  // An entry of a delegate's debug handle map: a string identifier when
  // `string_id` is not empty, else `int_id`.
  void delegate_map_entry(int delegate, int64_t int_id, const std::string& string_id,
                          std::vector<int32_t> handles) {
    delegates_[static_cast<size_t>(delegate)].map.push_back(MapEntry{int_id, string_id, std::move(handles)});
  }
  void set_plan_name(std::string name) { plan_name_ = std::move(name); }
  // Overrides of the planned layout, to build damaged programs.
  void set_arena_size(uint64_t bytes) { arena_size_override_ = bytes; }
  void set_arena_offset(int value, uint64_t offset) {
    values_[static_cast<size_t>(value)].arena_offset = offset;
  }

  std::vector<uint8_t> build() const {
    flatbuffers::FlatBufferBuilder b;
    // Segments: 0 holds the constants (when any), then one per delegate placed in a segment.
    std::vector<std::vector<uint8_t>> segment_bytes;
    if (!constants_.empty()) segment_bytes.push_back(constants_);
    std::vector<flatbuffers::Offset<fb::Delegate>> delegates;
    for (const Delegate& d : delegates_) delegates.push_back(build_delegate(b, d, segment_bytes));
    std::vector<flatbuffers::Offset<fb::Value>> values;
    for (const Value& v : values_)
      values.push_back(fb::CreateValue(b, b.CreateString(v.name), static_cast<fb::DType>(v.dtype),
                                       b.CreateVector(v.shape), v.kind, v.arena_offset, 0, v.segment_offset));
    std::vector<std::string> ops;
    std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
    for (const Call& c : instructions_) instructions.push_back(build_call(b, c, ops));
    std::vector<int32_t> inputs, outputs;
    for (size_t i = 0; i < values_.size(); ++i) {
      if (values_[i].kind == fb::ValueKind::Input) inputs.push_back(static_cast<int32_t>(i));
      if (values_[i].kind == fb::ValueKind::Output) outputs.push_back(static_cast<int32_t>(i));
    }
    auto plan = fb::CreateExecutionPlan(b, b.CreateString(plan_name_), b.CreateVector(values),
                                        b.CreateVector(inputs), b.CreateVector(outputs),
                                        b.CreateVector(instructions), arena_size(), arena_size());
    std::vector<fb::Segment> segments;
    uint64_t offset = 0;
    for (const auto& s : segment_bytes) {
      segments.emplace_back(offset, s.size());
      offset = align(offset + s.size());
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> op_names;
    for (const std::string& op : ops) op_names.push_back(b.CreateString(op));
    std::vector<flatbuffers::Offset<fb::DebugHandleInfo>> infos;
    for (const DebugInfo& d : debug_infos_)
      infos.push_back(
          fb::CreateDebugHandleInfo(b, d.handle, b.CreateString(d.name), b.CreateString(d.op_type)));
    auto root =
        fb::CreateProgram(b, kProgramVersion, b.CreateString("program_bytes"), b.CreateVector(op_names),
                          b.CreateVector(std::vector{plan}), b.CreateVector(delegates),
                          b.CreateVectorOfStructs(segments), b.CreateVector(infos));
    b.FinishSizePrefixed(root, kProgramIdentifier);
    std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    for (const auto& s : segment_bytes) {
      bytes.resize(align(bytes.size()), 0);
      bytes.insert(bytes.end(), s.begin(), s.end());
    }
    return bytes;
  }

 private:
  struct Value {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype;
    fb::ValueKind kind;
    uint64_t arena_offset = 0;
    uint64_t segment_offset = 0;
  };
  struct MapEntry {
    int64_t int_id;
    std::string string_id;
    std::vector<int32_t> handles;
  };
  struct Delegate {
    std::string backend_id;
    std::string processed;
    std::vector<std::pair<std::string, std::string>> compile_specs;
    Placement placement;
    std::vector<MapEntry> map = {};
  };
  struct Call {
    bool is_delegate;
    uint32_t delegate;
    std::string op;
    std::vector<int32_t> inputs, outputs;
    std::vector<int32_t> debug_handles;
    std::vector<std::pair<std::string, int64_t>> int_attrs = {};
  };
  struct DebugInfo {
    int32_t handle;
    std::string name, op_type;
  };

  uint64_t arena_size() const { return arena_size_override_ ? arena_size_override_ : arena_size_; }
  static uint64_t align(uint64_t n) {
    return (n + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment;
  }

  int add_value(const std::string& name, std::vector<int64_t> shape, DType dtype, fb::ValueKind kind) {
    Value v{name, std::move(shape), dtype, kind};
    if (kind != fb::ValueKind::Constant) {
      int64_t numel = 1;
      for (int64_t d : v.shape) numel *= d;
      v.arena_offset = arena_size_;
      arena_size_ = align(arena_size_ + static_cast<uint64_t>(numel) * dtype_size(dtype));
    }
    values_.push_back(std::move(v));
    return static_cast<int>(values_.size() - 1);
  }

  static flatbuffers::Offset<fb::Delegate> build_delegate(flatbuffers::FlatBufferBuilder& b,
                                                          const Delegate& d,
                                                          std::vector<std::vector<uint8_t>>& segment_bytes) {
    const std::vector<uint8_t> bytes(d.processed.begin(), d.processed.end());
    std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
    for (const auto& [key, value] : d.compile_specs)
      specs.push_back(fb::CreateCompileSpec(
          b, b.CreateString(key),
          b.CreateVector(reinterpret_cast<const uint8_t*>(value.data()), value.size())));
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> inline_data = 0;
    if (d.placement == Placement::Inline || d.placement == Placement::Both)
      inline_data = b.CreateVector(bytes);
    int32_t segment = -1;
    if (d.placement == Placement::Segment || d.placement == Placement::Both) {
      segment = static_cast<int32_t>(segment_bytes.size());
      segment_bytes.push_back(bytes);
    }
    std::vector<flatbuffers::Offset<fb::DelegateMapEntry>> map;
    for (const MapEntry& e : d.map)
      map.push_back(fb::CreateDelegateMapEntry(
          b, e.int_id, e.string_id.empty() ? 0 : b.CreateString(e.string_id), b.CreateVector(e.handles)));
    return fb::CreateDelegate(b, b.CreateString(d.backend_id), inline_data, segment, b.CreateVector(specs),
                              b.CreateVector(map));
  }

  static flatbuffers::Offset<fb::Instruction> build_call(flatbuffers::FlatBufferBuilder& b, const Call& c,
                                                         std::vector<std::string>& ops) {
    if (c.is_delegate) {
      auto call = fb::CreateDelegateCall(b, c.delegate, b.CreateVector(c.inputs), b.CreateVector(c.outputs));
      return fb::CreateInstruction(b, fb::InstructionArgs::DelegateCall, call.Union(),
                                   b.CreateVector(c.debug_handles));
    }
    uint32_t op = 0;
    while (op < ops.size() && ops[op] != c.op) ++op;
    if (op == ops.size()) ops.push_back(c.op);
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    for (const auto& [name, value] : c.int_attrs)
      attrs.push_back(fb::CreateAttr(b, b.CreateString(name), fb::AttrKind::Int, value));
    auto call = fb::CreateKernelCall(b, op, b.CreateVector(c.inputs), b.CreateVector(c.outputs),
                                     b.CreateVector(attrs));
    return fb::CreateInstruction(b, fb::InstructionArgs::KernelCall, call.Union(),
                                 b.CreateVector(c.debug_handles));
  }

  std::vector<Value> values_;
  std::vector<uint8_t> constants_;
  std::vector<Delegate> delegates_;
  std::vector<Call> instructions_;
  std::vector<DebugInfo> debug_infos_;
  uint64_t arena_size_ = 0;
  uint64_t arena_size_override_ = 0;
  std::string plan_name_ = "forward";
};

// Loads bytes built above; they must outlive the Program.
inline Result<Program> load_program_bytes(const std::vector<uint8_t>& bytes,
                                          const std::string& name = "test.etp") {
  return Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), name);
}

}  // namespace etc::testing
