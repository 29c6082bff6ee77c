#include "compiler/emit/program_writer.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>
#include <variant>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "compiler/emit/memory_planner.h"
#include "runtime/core/checksum.h"
#include "runtime/executor/program.h"
#include "runtime/schema/program_generated.h"

namespace etc::emit {
namespace {

constexpr const char* kProducer = "etc " ETC_VERSION_STRING;

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Step 1: arena offsets for every non-constant value (index: value id).
MemoryPlan plan_values(const ir::Graph& g) {
  const int32_t n = static_cast<int32_t>(g.values().size());
  std::vector<int32_t> first(n, -1), last(n, -1);
  for (const ir::Node& node : g.nodes()) {
    for (ir::ValueId v : node.inputs)
      if (v != ir::kNoValue) last[v] = std::max(last[v], node.id);
    for (ir::ValueId v : node.outputs) first[v] = node.id;
  }
  // Inputs stay untouched for the whole run so a method can execute again
  // without the caller setting its inputs anew.
  for (ir::ValueId v : g.inputs()) first[v] = -1, last[v] = INT32_MAX;
  for (ir::ValueId v : g.outputs()) last[v] = INT32_MAX;
  std::vector<BufferRequest> requests(n);
  for (const ir::Value& v : g.values()) {
    if (v.is_constant()) continue;  // size 0: placed at 0, never conflicts
    requests[v.id] = BufferRequest{v.spec.nbytes(), first[v.id], std::max(last[v.id], first[v.id])};
  }
  return plan_memory(requests);
}

flatbuffers::Offset<fb::Attr> build_attr(flatbuffers::FlatBufferBuilder& b, const std::string& name,
                                         const ir::AttrValue& value) {
  auto n = b.CreateString(name);
  if (const auto* i = std::get_if<int64_t>(&value)) return fb::CreateAttr(b, n, fb::AttrKind::Int, *i);
  if (const auto* f = std::get_if<float>(&value)) return fb::CreateAttr(b, n, fb::AttrKind::Float, 0, *f);
  if (const auto* is = std::get_if<std::vector<int64_t>>(&value))
    return fb::CreateAttr(b, n, fb::AttrKind::Ints, 0, 0, b.CreateVector(*is));
  if (const auto* fs = std::get_if<std::vector<float>>(&value))
    return fb::CreateAttr(b, n, fb::AttrKind::Floats, 0, 0, 0, b.CreateVector(*fs));
  return fb::CreateAttr(b, n, fb::AttrKind::String, 0, 0, 0, 0, b.CreateString(std::get<std::string>(value)));
}

// Segment payloads in file order; offsets are relative to segment_base.
// Views: the bytes must outlive serialization (the packed constants are owned
// here, delegate blobs stay in the program).
struct Segments {
  std::vector<uint8_t> constants;
  std::vector<std::span<const uint8_t>> data;
  std::vector<fb::Segment> table;

  uint32_t add(std::span<const uint8_t> bytes) {
    const size_t offset =
        table.empty() ? 0 : align_up(table.back().offset() + table.back().size(), kSegmentAlignment);
    table.emplace_back(offset, bytes.size());
    data.push_back(bytes);
    return static_cast<uint32_t>(table.size() - 1);
  }
};

// Step 2: every constant's offset in segment 0 (data shared by several
// values is stored once). No segment when the graph has no constants.
std::map<const std::vector<uint8_t>*, size_t> pack_constants(const ir::Graph& g, Segments& segments) {
  std::vector<uint8_t> segment;
  std::map<const std::vector<uint8_t>*, size_t> constant_offset;
  for (const ir::Value& v : g.values()) {
    if (!v.is_constant() || constant_offset.count(v.constant.get())) continue;
    const size_t off = align_up(segment.size(), kSegmentAlignment);
    segment.resize(off + v.constant->size());
    if (!v.constant->empty()) std::memcpy(segment.data() + off, v.constant->data(), v.constant->size());
    constant_offset[v.constant.get()] = off;
  }
  segments.constants = std::move(segment);
  if (!constant_offset.empty()) segments.add(segments.constants);
  return constant_offset;
}

// Step 3: the segment of each delegate's processed bytes.
std::vector<uint32_t> pack_delegates(const ir::ExportedProgram& program, Segments& segments) {
  std::vector<uint32_t> segment_of;
  for (const ir::LoweredBackendModule& m : program.delegates)
    segment_of.push_back(segments.add(m.processed_bytes));
  return segment_of;
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::DelegateMapEntry>>> build_debug_map(
    flatbuffers::FlatBufferBuilder& b, const DelegateDebugMap& map) {
  std::vector<flatbuffers::Offset<fb::DelegateMapEntry>> entries;
  auto sorted = [](DebugHandles h) {
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    return h;
  };
  if (const auto* ints = std::get_if<IntDelegateDebugMap>(&map)) {
    for (const auto& [id, handles] : *ints)
      entries.push_back(fb::CreateDelegateMapEntry(b, id, 0, b.CreateVector(sorted(handles))));
  } else {
    for (const auto& [id, handles] : std::get<StringDelegateDebugMap>(map))
      entries.push_back(
          fb::CreateDelegateMapEntry(b, 0, b.CreateString(id), b.CreateVector(sorted(handles))));
  }
  return b.CreateVector(entries);
}

std::vector<flatbuffers::Offset<fb::Delegate>> build_delegates(flatbuffers::FlatBufferBuilder& b,
                                                               const ir::ExportedProgram& program,
                                                               const std::vector<uint32_t>& segment_of) {
  std::vector<flatbuffers::Offset<fb::Delegate>> delegates;
  for (size_t i = 0; i < program.delegates.size(); ++i) {
    const ir::LoweredBackendModule& m = program.delegates[i];
    std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
    for (const CompileSpec& spec : m.compile_specs)
      specs.push_back(fb::CreateCompileSpec(b, b.CreateString(spec.key), b.CreateVector(spec.value)));
    delegates.push_back(fb::CreateDelegate(b, b.CreateString(m.backend_id), 0,
                                           static_cast<int32_t>(segment_of[i]), b.CreateVector(specs),
                                           build_debug_map(b, m.debug_handle_map)));
  }
  return delegates;
}

// Operators are the edge ops kernel calls use, in order of first use.
std::map<EdgeOp, uint32_t> index_operators(const ir::Graph& g, std::vector<std::string>& names) {
  std::map<EdgeOp, uint32_t> op_index;
  for (const ir::Node& n : g.nodes())
    if (!n.is_delegate_call() && !op_index.count(n.op)) {
      op_index[n.op] = static_cast<uint32_t>(names.size());
      names.emplace_back(edge_op_name(n.op));
    }
  return op_index;
}

flatbuffers::Offset<fb::Instruction> build_instruction(flatbuffers::FlatBufferBuilder& b, const ir::Node& n,
                                                       const std::map<EdgeOp, uint32_t>& op_index) {
  auto handles = b.CreateVector(n.meta.debug_handles);
  if (n.is_delegate_call()) {
    auto call = fb::CreateDelegateCall(b, static_cast<uint32_t>(n.delegate), b.CreateVector(n.inputs),
                                       b.CreateVector(n.outputs));
    return fb::CreateInstruction(b, fb::InstructionArgs::DelegateCall, call.Union(), handles);
  }
  std::vector<flatbuffers::Offset<fb::Attr>> attrs;
  for (const auto& [name, value] : n.attrs.items()) attrs.push_back(build_attr(b, name, value));
  auto call = fb::CreateKernelCall(b, op_index.at(n.op), b.CreateVector(n.inputs), b.CreateVector(n.outputs),
                                   b.CreateVector(attrs));
  return fb::CreateInstruction(b, fb::InstructionArgs::KernelCall, call.Union(), handles);
}

void check_emittable(const ir::ExportedProgram& program) {
  for (const ir::LoweredBackendModule& m : program.delegates) {
    if (m.backend_id.empty()) throw CompileError("delegate '" + m.tag + "' has no backend id");
    for (const CompileSpec& spec : m.compile_specs)
      if (spec.key.empty())
        throw CompileError("delegate '" + m.tag + "' (" + m.backend_id +
                           ") has a compile spec without a key");
  }
  for (const ir::Node& n : program.graph.nodes()) {
    if (n.dead) throw CompileError("internal: emit requires a compacted graph");
    if (!n.is_delegate_call()) continue;
    if (static_cast<size_t>(n.delegate) >= program.delegates.size())
      throw CompileError("internal: call_delegate node '" + n.meta.onnx_name + "' names delegate " +
                         std::to_string(n.delegate) + " of " + std::to_string(program.delegates.size()));
    for (ir::ValueId v : n.inputs)
      if (v == ir::kNoValue)
        throw CompileError("internal: call_delegate node '" + n.meta.onnx_name + "' has an absent input");
  }
}

}  // namespace

std::vector<uint8_t> serialize_program(const ir::ExportedProgram& program, EmitStats* stats) {
  const ir::Graph& g = program.graph;
  check_emittable(program);
  const MemoryPlan mem = plan_values(g);
  Segments segments;
  const auto constant_offset = pack_constants(g, segments);
  const std::vector<uint32_t> delegate_segment = pack_delegates(program, segments);
  uint64_t segment_bytes = 0;
  for (const auto& data : segments.data) segment_bytes += data.size();
  if (const std::string error = program_size_error(mem.arena_size, segment_bytes); !error.empty())
    throw CompileError(program.source_path + ": " + error);

  // Step 4.
  flatbuffers::FlatBufferBuilder b(1 << 16);
  std::vector<std::string> op_names;
  const std::map<EdgeOp, uint32_t> op_index = index_operators(g, op_names);
  std::vector<flatbuffers::Offset<fb::Value>> values;
  for (const ir::Value& v : g.values()) {
    std::vector<int64_t> shape(v.spec.shape.begin(), v.spec.shape.end());
    const bool is_in = std::find(g.inputs().begin(), g.inputs().end(), v.id) != g.inputs().end();
    const bool is_out = std::find(g.outputs().begin(), g.outputs().end(), v.id) != g.outputs().end();
    const fb::ValueKind kind = v.is_constant() ? fb::ValueKind::Constant
                               : is_in         ? fb::ValueKind::Input
                               : is_out        ? fb::ValueKind::Output
                                               : fb::ValueKind::Activation;
    values.push_back(fb::CreateValue(b, b.CreateString(v.name), static_cast<fb::DType>(v.spec.dtype),
                                     b.CreateVector(shape), kind, v.is_constant() ? 0 : mem.offsets[v.id], 0,
                                     v.is_constant() ? constant_offset.at(v.constant.get()) : 0));
  }
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
  for (const ir::Node& n : g.nodes()) instructions.push_back(build_instruction(b, n, op_index));
  auto plan = fb::CreateExecutionPlan(b, b.CreateString("forward"), b.CreateVector(values),
                                      b.CreateVector(g.inputs()), b.CreateVector(g.outputs()),
                                      b.CreateVector(instructions), mem.arena_size, mem.lower_bound);
  const auto delegates = build_delegates(b, program, delegate_segment);
  std::vector<flatbuffers::Offset<fb::DebugHandleInfo>> debug;
  for (const auto& [handle, info] : program.debug_handles)
    debug.push_back(fb::CreateDebugHandleInfo(b, handle, b.CreateString(info.onnx_name),
                                              b.CreateString(info.onnx_op_type)));
  std::vector<flatbuffers::Offset<flatbuffers::String>> ops;
  for (const std::string& s : op_names) ops.push_back(b.CreateString(s));
  std::vector<uint64_t> segment_checksums;
  for (const auto& data : segments.data) segment_checksums.push_back(checksum64(data.data(), data.size()));
  auto root = fb::CreateProgram(
      b, kProgramVersion, b.CreateString(kProducer), b.CreateVector(ops), b.CreateVector(std::vector{plan}),
      b.CreateVector(delegates), b.CreateVectorOfStructs(segments.table), b.CreateVector(debug),
      b.CreateString(std::filesystem::path(program.source_path).filename().string()),
      b.CreateVector(segment_checksums));
  b.FinishSizePrefixed(root, kProgramIdentifier);

  // Layout: [size prefix + flatbuffer][pad to 64][segment 0][pad to 64][segment 1]...
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (!segments.table.empty()) {
    const size_t base = align_up(bytes.size(), kSegmentAlignment);
    for (size_t i = 0; i < segments.table.size(); ++i) {
      bytes.resize(base + segments.table[i].offset(), 0);
      bytes.insert(bytes.end(), segments.data[i].begin(), segments.data[i].end());
    }
  }
  if (stats) {
    stats->file_size = bytes.size();
    stats->constant_bytes = segments.constants.size();
    stats->arena_size = mem.arena_size;
    stats->arena_lower_bound = mem.lower_bound;
    stats->num_instructions = instructions.size();
    stats->num_delegates = program.delegates.size();
    stats->delegate_bytes = 0;
    for (const ir::LoweredBackendModule& m : program.delegates)
      stats->delegate_bytes += m.processed_bytes.size();
  }
  return bytes;
}

}  // namespace etc::emit
