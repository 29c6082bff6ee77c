#include "compiler/passes/fuse_activation.h"

#include <cmath>
#include <limits>

#include "compiler/passes/absorb.h"

namespace etc::passes {
namespace {

bool is_fusable_producer(EdgeOp op) {
  return op == EdgeOp::Conv || op == EdgeOp::Gemm || op == EdgeOp::MatMul;
}

float float_attr(const ir::Node& n, const char* name, float fallback) {
  const ir::AttrValue* v = n.attrs.find(name);
  return v && std::holds_alternative<float>(*v) ? std::get<float>(*v) : fallback;
}

// The bounds of a relu or clip, or false when it cannot be fused.
bool activation_bounds(const ir::Node& act, float* lo, float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (act.op == EdgeOp::Relu) {
    *lo = 0.0f;
    *hi = kInf;
    return true;
  }
  if (act.op != EdgeOp::Clip) return false;
  *lo = float_attr(act, "min", -kInf);
  *hi = float_attr(act, "max", kInf);
  // An empty interval (or NaN bound) clips differently from a max-then-min clamp.
  return *lo <= *hi;
}

// The producer of `act`'s input, if the fusion applies.
ir::Node* fusable_producer(ir::Graph& g, const ir::Node& act,
                           const std::vector<std::vector<ir::NodeId>>& users) {
  if (act.inputs.size() != 1 || act.outputs.size() != 1) return nullptr;
  const ir::ValueId x = act.inputs[0];
  const ir::Value& xv = g.value(x);
  if (xv.producer < 0 || users[x].size() != 1) return nullptr;
  for (ir::ValueId out : g.outputs())
    if (out == x) return nullptr;
  ir::Node& producer = g.node(xv.producer);
  if (producer.dead || !is_fusable_producer(producer.op) || producer.outputs.size() != 1) return nullptr;
  if (producer.attrs.find("clamp_min") || producer.attrs.find("clamp_max")) return nullptr;
  const DType dtype = xv.spec.dtype;
  if (dtype != DType::Float32 && dtype != DType::Float64) return nullptr;
  return &producer;
}

void fuse(ir::Graph& g, ir::Node& producer, ir::Node& act, float lo, float hi) {
  if (std::isfinite(lo)) producer.attrs.set("clamp_min", lo);
  if (std::isfinite(hi)) producer.attrs.set("clamp_max", hi);
  absorb_node(g, producer, act);
}

}  // namespace

size_t fuse_activation(ir::Graph& g) {
  size_t fused = 0;
  const std::vector<std::vector<ir::NodeId>> users = g.users();
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    ir::Node& act = g.nodes()[i];
    float lo = 0.0f, hi = 0.0f;
    if (act.dead || !activation_bounds(act, &lo, &hi)) continue;
    if (ir::Node* producer = fusable_producer(g, act, users)) {
      fuse(g, *producer, act, lo, hi);
      ++fused;
    }
  }
  return fused;
}

}  // namespace etc::passes
