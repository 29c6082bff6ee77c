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
#include "compiler/emit/flatten.h"
#include "compiler/emit/memory_planner.h"
#include "runtime/core/checksum.h"
#include "runtime/executor/program.h"
#include "runtime/schema/program_generated.h"

namespace etc::emit {
namespace {

constexpr const char* kProducer = "etc " ETC_VERSION_STRING;

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

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
// Views: the bytes must outlive serialization (the packed constants are the
// ProgramImage's, delegate blobs stay in the program).
struct Segments {
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

// Step 2: every constant's offset in segment 0, packed into `segment` (data
// shared by several values is stored once). No segment when the graph has
// no constants.
std::map<const std::vector<uint8_t>*, size_t> pack_constants(const FlatPlan& flat,
                                                             std::vector<uint8_t>& segment,
                                                             Segments& segments) {
  std::map<const std::vector<uint8_t>*, size_t> constant_offset;
  size_t total = 0;  // an upper bound: the segment grows once
  for (const ir::Value* value : flat.values)
    if (value->is_constant()) total += align_up(value->constant->size(), kSegmentAlignment);
  segment.reserve(total);
  for (const ir::Value* value : flat.values) {
    const ir::Value& v = *value;
    if (!v.is_constant() || constant_offset.count(v.constant.get())) continue;
    const size_t off = align_up(segment.size(), kSegmentAlignment);
    segment.resize(off + v.constant->size());
    if (!v.constant->empty()) std::memcpy(segment.data() + off, v.constant->data(), v.constant->size());
    constant_offset[v.constant.get()] = off;
  }
  if (!constant_offset.empty()) segments.add(segment);
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
std::map<EdgeOp, uint32_t> index_operators(const FlatPlan& flat, std::vector<std::string>& names) {
  std::map<EdgeOp, uint32_t> op_index;
  for (const FlatChain& chain : flat.chains)
    for (const FlatInstruction& ins : chain.instructions) {
      const ir::Node& n = *ins.node;
      if (!n.is_delegate_call() && !n.is_control() && !op_index.count(n.op)) {
        op_index[n.op] = static_cast<uint32_t>(names.size());
        names.emplace_back(edge_op_name(n.op));
      }
    }
  return op_index;
}

flatbuffers::Offset<fb::Instruction> build_instruction(flatbuffers::FlatBufferBuilder& b,
                                                       const FlatInstruction& ins,
                                                       const std::map<EdgeOp, uint32_t>& op_index) {
  const ir::Node& n = *ins.node;
  auto handles = b.CreateVector(n.meta.debug_handles);
  if (n.is_delegate_call()) {
    auto call = fb::CreateDelegateCall(b, static_cast<uint32_t>(n.delegate), b.CreateVector(ins.inputs),
                                       b.CreateVector(ins.outputs),
                                       ins.chains.empty() ? -1 : static_cast<int32_t>(ins.chains[0]));
    return fb::CreateInstruction(b, fb::InstructionArgs::DelegateCall, call.Union(), handles);
  }
  if (n.op == EdgeOp::If) {
    auto error = [&](const char* name) -> flatbuffers::Offset<flatbuffers::String> {
      const ir::AttrValue* a = n.attrs.find(name);
      return a ? b.CreateString(std::get<std::string>(*a)) : 0;
    };
    auto then_error = error("then_error");
    auto else_error = error("else_error");
    auto call = fb::CreateIfCall(b, ins.inputs[0], ins.chains[0], ins.chains[1], b.CreateVector(ins.outputs),
                                 then_error, else_error);
    return fb::CreateInstruction(b, fb::InstructionArgs::IfCall, call.Union(), handles);
  }
  if (n.op == EdgeOp::Loop) {
    const std::vector<int32_t> initial(ins.inputs.begin() + 2, ins.inputs.begin() + 2 + loop_carried(n));
    auto call = fb::CreateLoopCall(b, ins.inputs[0], ins.inputs[1], ins.chains[0], b.CreateVector(initial),
                                   b.CreateVector(ins.outputs));
    return fb::CreateInstruction(b, fb::InstructionArgs::LoopCall, call.Union(), handles);
  }
  std::vector<flatbuffers::Offset<fb::Attr>> attrs;
  for (const auto& [name, value] : n.attrs.items()) attrs.push_back(build_attr(b, name, value));
  auto call = fb::CreateKernelCall(b, op_index.at(n.op), b.CreateVector(ins.inputs),
                                   b.CreateVector(ins.outputs), b.CreateVector(attrs));
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
  for_each_node(program.graph, [&](const ir::Node& n) {
    if (n.dead) throw CompileError("internal: emit requires a compacted graph");
    if (!n.is_delegate_call()) return;
    if (static_cast<size_t>(n.delegate) >= program.delegates.size())
      throw CompileError("internal: call_delegate node '" + n.meta.onnx_name + "' names delegate " +
                         std::to_string(n.delegate) + " of " + std::to_string(program.delegates.size()));
    for (ir::ValueId v : n.inputs)
      if (v == ir::kNoValue)
        throw CompileError("internal: call_delegate node '" + n.meta.onnx_name + "' has an absent input");
  });
}

}  // namespace

namespace {

// The arena: the program's values, then (from fallback_offset, 0 when none)
// those of the portable fallbacks kept beside delegates, which a run touches
// only when a backend cannot run (so their pages stay unmapped otherwise).
struct ArenaPlan : MemoryPlan {
  size_t fallback_offset = 0;
};

ArenaPlan plan_arena(const FlatPlan& flat) {
  std::vector<BufferRequest> main = flat.lifetimes, fallback = flat.lifetimes;
  bool any = false;
  for (size_t v = 0; v < flat.lifetimes.size(); ++v) {
    (flat.in_fallback[v] ? main : fallback)[v].size = 0;
    any = any || (flat.in_fallback[v] && flat.lifetimes[v].size > 0);
  }
  ArenaPlan plan;
  static_cast<MemoryPlan&>(plan) = plan_memory(main);
  if (!any) return plan;
  const MemoryPlan extra = plan_memory(fallback);
  plan.fallback_offset = (plan.arena_size + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  for (size_t v = 0; v < flat.lifetimes.size(); ++v)
    if (flat.in_fallback[v]) plan.offsets[v] = plan.fallback_offset + extra.offsets[v];
  plan.arena_size = plan.fallback_offset + extra.arena_size;
  plan.lower_bound += extra.lower_bound;
  return plan;
}

}  // namespace

ProgramImage serialize_program_image(const ir::ExportedProgram& program, EmitStats* stats) {
  check_emittable(program);
  const FlatPlan flat = flatten(program.graph);
  const ArenaPlan mem = plan_arena(flat);
  ProgramImage image;
  Segments segments;
  const auto constant_offset = pack_constants(flat, image.constants, segments);
  const std::vector<uint32_t> delegate_segment = pack_delegates(program, segments);
  uint64_t segment_bytes = 0;
  for (const auto& data : segments.data) segment_bytes += data.size();
  if (const std::string error = program_size_error(mem.arena_size, segment_bytes); !error.empty())
    throw CompileError(program.source_path + ": " + error);

  // Step 4.
  flatbuffers::FlatBufferBuilder b(1 << 16);
  std::vector<std::string> op_names;
  const std::map<EdgeOp, uint32_t> op_index = index_operators(flat, op_names);
  std::vector<flatbuffers::Offset<fb::Value>> values;
  for (size_t id = 0; id < flat.values.size(); ++id) {
    const ir::Value& v = *flat.values[id];
    const auto fid = static_cast<int32_t>(id);
    std::vector<int64_t> shape(v.spec.shape.begin(), v.spec.shape.end());
    const bool is_in = std::find(flat.inputs.begin(), flat.inputs.end(), fid) != flat.inputs.end();
    const bool is_out = std::find(flat.outputs.begin(), flat.outputs.end(), fid) != flat.outputs.end();
    const fb::ValueKind kind = v.is_constant() ? fb::ValueKind::Constant
                               : is_in         ? fb::ValueKind::Input
                               : is_out        ? fb::ValueKind::Output
                                               : fb::ValueKind::Activation;
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> min_shape = 0;
    if (is_in) {
      const auto k =
          static_cast<size_t>(std::find(flat.inputs.begin(), flat.inputs.end(), fid) - flat.inputs.begin());
      if (const auto it = program.input_min_shapes.find(k); it != program.input_min_shapes.end())
        min_shape = b.CreateVector(std::vector<int64_t>(it->second.begin(), it->second.end()));
    }
    values.push_back(fb::CreateValue(b, b.CreateString(v.name), static_cast<fb::DType>(v.spec.dtype),
                                     b.CreateVector(shape), kind, v.is_constant() ? 0 : mem.offsets[id], 0,
                                     v.is_constant() ? constant_offset.at(v.constant.get()) : 0, min_shape));
  }
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
  std::vector<flatbuffers::Offset<fb::Chain>> chains;
  for (const FlatChain& chain : flat.chains) {
    const auto first = static_cast<uint32_t>(instructions.size());
    for (const FlatInstruction& ins : chain.instructions)
      instructions.push_back(build_instruction(b, ins, op_index));
    chains.push_back(fb::CreateChain(b, first, static_cast<uint32_t>(chain.instructions.size()),
                                     b.CreateVector(chain.inputs), b.CreateVector(chain.outputs)));
  }
  // A plan without control flow leaves the chains out: one chain of every instruction.
  auto plan = fb::CreateExecutionPlan(b, b.CreateString("forward"), b.CreateVector(values),
                                      b.CreateVector(flat.inputs), b.CreateVector(flat.outputs),
                                      b.CreateVector(instructions), mem.arena_size, mem.lower_bound,
                                      chains.size() > 1 ? b.CreateVector(chains) : 0, mem.fallback_offset);
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
  static constexpr uint8_t kZeros[kSegmentAlignment] = {};
  image.flatbuffer.assign(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  image.pieces.push_back(image.flatbuffer);
  size_t at = image.flatbuffer.size();
  const size_t base = align_up(at, kSegmentAlignment);
  for (size_t i = 0; i < segments.table.size(); ++i) {
    const size_t offset = base + segments.table[i].offset();
    image.pieces.push_back(std::span<const uint8_t>(kZeros, offset - at));
    image.pieces.push_back(segments.data[i]);
    at = offset + segments.data[i].size();
  }
  if (stats) {
    stats->file_size = at;
    stats->constant_bytes = image.constants.size();
    stats->arena_size = mem.arena_size;
    stats->arena_lower_bound = mem.lower_bound;
    stats->num_instructions = instructions.size();
    stats->num_delegates = program.delegates.size();
    stats->delegate_bytes = 0;
    for (const ir::LoweredBackendModule& m : program.delegates)
      stats->delegate_bytes += m.processed_bytes.size();
  }
  return image;
}

size_t ProgramImage::size() const {
  size_t n = 0;
  for (const auto& piece : pieces) n += piece.size();
  return n;
}

std::vector<uint8_t> serialize_program(const ir::ExportedProgram& program, EmitStats* stats) {
  const ProgramImage image = serialize_program_image(program, stats);
  std::vector<uint8_t> bytes;
  bytes.reserve(image.size());
  for (const auto& piece : image.pieces) bytes.insert(bytes.end(), piece.begin(), piece.end());
  return bytes;
}

}  // namespace etc::emit
