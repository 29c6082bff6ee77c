#include "compiler/ir/verifier.h"

#include <string>

#include "compiler/ir/printer.h"
#include "runtime/kernels/kernel.h"

namespace etc::ir {
namespace {

std::string where(const Node& n) { return "node " + std::to_string(n.id) + " (" + describe(n) + ")"; }

Status check_op_types(const Node& n, const std::vector<TensorSpec>& in, const std::vector<TensorSpec>& out) {
  const OpDef* def = find_op_def(n.op);
  if (!def) return fail(Error::NotSupported, where(n), ": no portable kernel for this op");
  std::vector<TensorSpec> inferred(out.size());
  const std::vector<AttrView> views = n.attrs.views();
  ETC_TRY(infer_outputs(*def, AttrList(views), in, inferred));
  for (size_t i = 0; i < out.size(); ++i)
    if (!(out[i] == inferred[i]))
      return fail(Error::Internal, where(n), ": output ", std::to_string(i), " typed ", out[i].str(),
                  " but its op computes ", inferred[i].str());
  return Status::Ok();
}

// One side (inputs or outputs) of a call_delegate node against the lowered
// module's graph.
Status check_delegate_side(const Graph& g, const Node& n, const std::vector<ValueId>& ours, const Graph& sub,
                           const std::vector<ValueId>& theirs, const char* side) {
  auto count = [side](size_t k) { return std::to_string(k) + " " + side + (k == 1 ? "" : "s"); };
  if (ours.size() != theirs.size())
    return fail(Error::Internal, where(n), ": has ", count(ours.size()),
                " but its lowered module's program has ", count(theirs.size()));
  for (size_t i = 0; i < ours.size(); ++i) {
    const TensorSpec& a = g.value(ours[i]).spec;
    const TensorSpec& b = sub.value(theirs[i]).spec;
    if (!(a == b))
      return fail(Error::Internal, where(n), ": ", side, " ", std::to_string(i), " ('", g.value(ours[i]).name,
                  "') is ", a.str(), " but its lowered module expects ", b.str());
  }
  return Status::Ok();
}

Status check_body_side(const Node& n, const Graph& body, const char* which,
                       const std::vector<TensorSpec>& ours, const std::vector<ValueId>& theirs, size_t first,
                       const char* side) {
  if (theirs.size() != ours.size() + first)
    return fail(Error::Internal, where(n), ": its ", which, " has ", std::to_string(theirs.size()), " ", side,
                "s, expected ", std::to_string(ours.size() + first));
  for (size_t i = 0; i < ours.size(); ++i) {
    const TensorSpec& b = body.value(theirs[first + i]).spec;
    if (dtype_valid(ours[i].dtype) && !(ours[i] == b))
      return fail(Error::Internal, where(n), ": ", side, " ", std::to_string(first + i), " of its ", which,
                  " is ", b.str(), ", the node's is ", ours[i].str());
  }
  return Status::Ok();
}

bool is_one(const TensorSpec& s, DType dtype) { return s.dtype == dtype && s.shape.numel() == 1; }

// A control-flow node against its bodies (conventions in edge_ops.def).
Status check_control(const Node& n, const std::vector<TensorSpec>& in, const std::vector<TensorSpec>& out) {
  for (const auto& body : n.subgraphs) {
    if (!body) return fail(Error::Internal, where(n), ": has a null body");
    const Status s = verify(*body);
    if (!s.ok()) return fail(s.error(), where(n), ": in its body: ", s.message());
  }
  if (n.op == EdgeOp::If) {
    if (n.subgraphs.size() != 2) return fail(Error::Internal, where(n), ": needs two branches");
    if (in.empty() || !is_one(in[0], DType::Bool))
      return fail(Error::Internal, where(n), ": the condition is not one bool");
    const std::vector<TensorSpec> captured(in.begin() + 1, in.end());
    for (size_t b = 0; b < 2; ++b) {
      const char* which = b == 0 ? "then branch" : "else branch";
      ETC_TRY(check_body_side(n, *n.subgraphs[b], which, captured, n.subgraphs[b]->inputs(), 0, "input"));
      ETC_TRY(check_body_side(n, *n.subgraphs[b], which, out, n.subgraphs[b]->outputs(), 0, "output"));
    }
    return Status::Ok();
  }
  if (n.subgraphs.size() != 1) return fail(Error::Internal, where(n), ": needs one body");
  const Graph& body = *n.subgraphs[0];
  const AttrValue* carried_attr = n.attrs.find("carried");
  const int64_t* carried_ptr = carried_attr ? std::get_if<int64_t>(carried_attr) : nullptr;
  const int64_t carried = carried_ptr ? *carried_ptr : -1;
  if (carried < 0 || in.size() < 2 + static_cast<size_t>(carried) ||
      out.size() < static_cast<size_t>(carried))
    return fail(Error::Internal, where(n), ": bad carried count ", std::to_string(carried));
  if (dtype_valid(in[0].dtype) && !is_one(in[0], DType::Int64))
    return fail(Error::Internal, where(n), ": the trip count is not one int64");
  if (dtype_valid(in[1].dtype) && !is_one(in[1], DType::Bool))
    return fail(Error::Internal, where(n), ": the condition is not one bool");
  std::vector<TensorSpec> body_in{TensorSpec{DType::Int64, Shape{}}, TensorSpec{DType::Bool, Shape{}}};
  body_in.insert(body_in.end(), in.begin() + 2, in.end());
  ETC_TRY(check_body_side(n, body, "body", body_in, body.inputs(), 0, "input"));
  std::vector<TensorSpec> body_out{TensorSpec{DType::Bool, Shape{}}};
  body_out.insert(body_out.end(), out.begin(), out.begin() + carried);
  for (size_t i = static_cast<size_t>(carried); i < out.size(); ++i) {
    if (out[i].shape.rank() == 0)
      return fail(Error::Internal, where(n), ": scan output without a leading axis");
    const Span<const int64_t> dims = out[i].shape.dims();
    body_out.push_back(
        TensorSpec{out[i].dtype, Shape(Span<const int64_t>(dims.data() + 1, dims.size() - 1))});
  }
  if (!is_one(body.value(body.outputs().empty() ? 0 : body.outputs()[0]).spec, DType::Bool))
    return fail(Error::Internal, where(n), ": the body's condition output is not one bool");
  body_out[0] = body.value(body.outputs()[0]).spec;
  return check_body_side(n, body, "body", body_out, body.outputs(), 0, "output");
}

}  // namespace

Status verify(const Graph& g) {
  const size_t nv = g.values().size();
  std::vector<bool> defined(nv, false);
  for (ValueId v : g.inputs()) {
    if (v < 0 || static_cast<size_t>(v) >= nv) return fail(Error::Internal, "graph input id out of range");
    defined[v] = true;
  }
  for (const Value& v : g.values())
    if (v.is_constant()) {
      if (v.constant->size() != v.spec.nbytes())
        return fail(Error::Internal, "constant '", v.name, "' holds ", std::to_string(v.constant->size()),
                    " bytes, its type needs ", std::to_string(v.spec.nbytes()));
      defined[v.id] = true;
    }
  for (const Node& n : g.nodes()) {
    if (n.dead) continue;
    std::vector<TensorSpec> in, out;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) {
        if (n.is_delegate_call() || (n.is_control() && (n.op == EdgeOp::If || in.size() >= 2)))
          return fail(Error::Internal, where(n), ": input ", std::to_string(in.size()), " is absent");
        in.emplace_back();
        continue;
      }
      if (v < 0 || static_cast<size_t>(v) >= nv)
        return fail(Error::Internal, where(n), ": input id out of range");
      if (!defined[v])
        return fail(Error::Internal, where(n), ": reads '", g.value(v).name, "' before it is defined");
      in.push_back(g.value(v).spec);
    }
    for (ValueId v : n.outputs) {
      if (v < 0 || static_cast<size_t>(v) >= nv)
        return fail(Error::Internal, where(n), ": output id out of range");
      if (defined[v]) return fail(Error::Internal, where(n), ": '", g.value(v).name, "' is defined twice");
      defined[v] = true;
      out.push_back(g.value(v).spec);
    }
    if (n.is_control())
      ETC_TRY(check_control(n, in, out));
    else if (!n.is_delegate_call())
      ETC_TRY(check_op_types(n, in, out));
  }
  for (ValueId v : g.outputs())
    if (v < 0 || static_cast<size_t>(v) >= nv || !defined[v])
      return fail(Error::Internal, "graph output is not defined");
  return Status::Ok();
}

Status verify(const ExportedProgram& p) {
  ETC_TRY(verify(p.graph));
  const Graph& g = p.graph;
  for (const Node& n : g.nodes()) {
    if (n.dead || !n.is_delegate_call()) continue;
    if (static_cast<size_t>(n.delegate) >= p.delegates.size())
      return fail(Error::Internal, where(n), ": calls delegate ", std::to_string(n.delegate),
                  " but the program has ", std::to_string(p.delegates.size()));
    const LoweredBackendModule& m = p.delegates[n.delegate];
    if (!m.original_program) continue;
    const Graph& sub = m.original_program->graph;
    ETC_TRY(check_delegate_side(g, n, n.inputs, sub, sub.inputs(), "input"));
    ETC_TRY(check_delegate_side(g, n, n.outputs, sub, sub.outputs(), "output"));
  }
  for (size_t i = 0; i < p.delegates.size(); ++i) {
    const LoweredBackendModule& m = p.delegates[i];
    if (!m.original_program) continue;
    const Status s = verify(*m.original_program);
    if (!s.ok())
      return fail(s.error(), "delegate ", std::to_string(i), " ('", m.tag, "' \u2192 ", m.backend_id,
                  "): its original program: ", s.message());
  }
  return Status::Ok();
}

}  // namespace etc::ir
