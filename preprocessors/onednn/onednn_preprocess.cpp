#include "preprocessors/onednn/onednn_preprocess.h"

#include <optional>
#include <set>

#include "compiler/backend/delegate_mapping_builder.h"
#include "compiler/common/compile_error.h"
#include "compiler/ir/node_attrs.h"
#include "compiler/ir/printer.h"
#include "partitioners/onednn/onednn_partitioner.h"
#include "partitioners/onednn/onednn_rules.h"
#include "preprocessors/onednn/onednn_lowering.h"
#include "runtime/backends/onednn/winograd_rule.h"
#ifdef ETC_HAVE_ONEDNN_BACKEND
#include "runtime/backends/onednn/prepack.h"
#endif

namespace etc::onednn {
namespace {

void emit(Lowering& l, const ir::Node& n) {
  switch (n.op) {
#define ETC_DNNL_OP(op, rule, emit) \
  case EdgeOp::op:                  \
    return emit(l, n);
#include "partitioners/onednn/onednn_ops.def"
#undef ETC_DNNL_OP
    default: throw CompileError(std::string("onednn: no oneDNN lowering for '") + edge_op_name(n.op) + "'");
  }
}

// A node and the edge nodes folded into its post-ops, in order.
struct Chain {
  ir::NodeId head = -1;
  std::vector<ir::NodeId> followers;
};

// Steps of fold_chains, per head in node order:
//   1. the head's current output must have one reader and not leave the
//      partition;
//   2. an activation oneDNN has becomes an eltwise post-op;
//   3. a convolution's first same-shape add (no activation before it)
//      becomes a sum post-op, its other operand the residual.
std::vector<Chain> fold_chains(const ir::Graph& g) {
  const std::vector<std::vector<ir::NodeId>> users = g.users();
  const std::set<ir::ValueId> outputs(g.outputs().begin(), g.outputs().end());
  std::vector<bool> taken(g.nodes().size(), false);
  std::vector<Chain> chains;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || taken[static_cast<size_t>(n.id)]) continue;
    const bool conv = n.op == EdgeOp::Conv;
    if (!conv && n.op != EdgeOp::Gemm && n.op != EdgeOp::MatMul && !is_same_shape_binary(g, n)) continue;
    Chain chain{n.id, {}};
    bool activated = fused_clamp(n).algorithm != fb::Algorithm::None, summed = false;
    ir::ValueId v = n.outputs[0];
    for (;;) {
      const std::vector<ir::NodeId>& readers = users[static_cast<size_t>(v)];
      if (readers.size() != 1 || outputs.count(v)) break;
      const ir::Node& u = g.node(readers[0]);
      if (taken[static_cast<size_t>(u.id)]) break;
      if (activation_of(u).algorithm != fb::Algorithm::None && u.inputs[0] == v) {
        activated = true;
      } else if (conv && !activated && !summed && u.op == EdgeOp::Add && is_same_shape_binary(g, u) &&
                 u.inputs[0] != u.inputs[1]) {
        summed = true;
      } else {
        break;
      }
      chain.followers.push_back(u.id);
      taken[static_cast<size_t>(u.id)] = true;
      v = u.outputs[0];
    }
    if (!chain.followers.empty()) chains.push_back(chain);
  }
  return chains;
}

void add_post_op(Lowering& l, fb::NodeT& node, const ir::Node& follower, ir::ValueId previous) {
  if (follower.op != EdgeOp::Add) return add_activation(node, activation_of(follower));
  auto p = std::make_unique<fb::PostOpT>();
  p->kind = fb::PostOpKind::Sum;
  p->operand = l.tensor(follower.inputs[follower.inputs[0] == previous ? 1 : 0]);
  node.post_ops.push_back(std::move(p));
}

// Emits a chain's head where its last follower stands, with the followers
// as post-ops writing the last follower's output.
void emit_chain(Lowering& l, const ir::Graph& g, const Chain& chain) {
  const ir::Node& head = g.node(chain.head);
  const size_t first = l.nodes().size();
  emit(l, head);
  if (l.nodes().size() != first + 1) throw CompileError("onednn: a folded node lowered to several nodes");
  LoweredNode& lowered = l.nodes().back();
  ir::ValueId previous = head.outputs[0];
  for (ir::NodeId f : chain.followers) {
    const ir::Node& follower = g.node(f);
    add_post_op(l, *lowered.node, follower, previous);
    lowered.covers.push_back(&follower);
    previous = follower.outputs[0];
  }
  lowered.node->outputs = {l.tensor(previous)};
}

// The value of compile spec `key`, if given.
std::optional<std::string> spec(std::span<const CompileSpec> specs, const std::string& key) {
  for (const CompileSpec& s : specs)
    if (s.key == key) return s.value_string();
  return std::nullopt;
}

CompileError bad_spec(const std::string& key, const std::string& value, const std::string& expected) {
  return CompileError("onednn: compile spec " + key + "='" + value + "' (expected " + expected + ")");
}

// Compile spec "threads": the thread count prepacked weights are for
// (default: this machine's cores).
#ifdef ETC_HAVE_ONEDNN_BACKEND
int packing_threads(std::span<const CompileSpec> specs) {
  const std::optional<std::string> value = spec(specs, "threads");
  if (!value) return machine_threads();
  char* end = nullptr;
  const long n = std::strtol(value->c_str(), &end, 10);
  if (end == value->c_str() || *end != '\0' || n < 1 || n > 1024)
    throw bad_spec("threads", *value, "1 to 1024");
  return static_cast<int>(n);
}
#endif

// prepack=on: the weights in the layouts this machine's primitives choose.
// Every spec is checked whether or not it is used.
std::vector<uint8_t> prepack(std::vector<uint8_t> blob, std::span<const CompileSpec> specs) {
  const std::string winograd = spec(specs, "winograd").value_or("auto");
  const std::optional<WinogradMode> mode = parse_winograd_mode(winograd);
  if (!mode) throw bad_spec("winograd", winograd, "auto, on, off");
  const std::string prepack = spec(specs, "prepack").value_or("off");
  if (prepack != "on" && prepack != "off") throw bad_spec("prepack", prepack, "on, off");
  if (prepack == "off") return blob;
#ifdef ETC_HAVE_ONEDNN_BACKEND
  CompileOptions options;
  options.num_threads = packing_threads(specs);
  options.winograd = *mode;
  Result<std::vector<uint8_t>> packed = prepack_blob(blob, options);
  if (!packed.ok()) throw CompileError("onednn: cannot prepack: " + packed.message());
  return std::move(*packed);
#else
  throw CompileError(
      "onednn: compile spec prepack=on needs a build with the oneDNN backend (ETC_BACKEND_ONEDNN)");
#endif
}

bool has_valid_handle(const LoweredNode& n) {
  for (const ir::Node* e : n.covers)
    for (int32_t h : e->meta.debug_handles)
      if (h >= 0) return true;
  return false;
}

}  // namespace

PreprocessResult OnednnBackendDetails::preprocess(const ir::ExportedProgram& partition,
                                                  std::span<const CompileSpec> compile_specs) const {
  const ir::Graph& g = partition.graph;
  Lowering lowering(partition);
  const std::vector<Chain> chains = fold_chains(g);
  std::vector<const Chain*> head_of(g.nodes().size(), nullptr), ends(g.nodes().size(), nullptr);
  for (const Chain& c : chains) {
    head_of[static_cast<size_t>(c.head)] = &c;
    for (ir::NodeId f : c.followers) head_of[static_cast<size_t>(f)] = &c;
    ends[static_cast<size_t>(c.followers.back())] = &c;
  }
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    try {
      const Support s = n.is_delegate_call() ? Support::no("onednn: a call_delegate node")
                                             : OnednnPartitioner::is_supported(g, n);
      if (!s.supported) throw CompileError(s.reason);
      if (const Chain* c = ends[static_cast<size_t>(n.id)]) {
        emit_chain(lowering, g, *c);
      } else if (head_of[static_cast<size_t>(n.id)] == nullptr) {
        emit(lowering, n);
      }
    } catch (const CompileError& e) {
      throw CompileError(partition.source_path + ": node " + ir::node_ref(n) + ": " + e.what());
    }
  }
  DelegateMappingBuilder builder(/*generated_identifiers=*/true);
  std::vector<uint32_t> debug_ids;
  for (const LoweredNode& n : lowering.nodes()) {
    if (!has_valid_handle(n)) {
      debug_ids.push_back(kNoDebugId);
      continue;
    }
    const DelegateIdentifier id = builder.insert_delegate_mapping_entry(n.covers);
    debug_ids.push_back(static_cast<uint32_t>(std::get<int64_t>(id)));
  }
  PreprocessResult result;
  result.processed_bytes = prepack(lowering.finish(debug_ids), compile_specs);
  result.debug_handle_map = builder.get_delegate_mapping();
  return result;
}

}  // namespace etc::onednn
