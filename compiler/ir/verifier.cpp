#include "compiler/ir/verifier.h"

#include <string>

#include "compiler/ir/printer.h"
#include "runtime/kernels/kernel.h"

namespace etc::ir {
namespace {

std::string where(const Node& n) { return "node " + std::to_string(n.id) + " (" + describe(n) + ")"; }

std::string type_str(const TensorSpec& s) { return std::string(dtype_name(s.dtype)) + s.shape.str(); }

Status check_op_types(const Node& n, const std::vector<TensorSpec>& in, const std::vector<TensorSpec>& out) {
  const OpDef* def = find_op_def(n.op);
  if (!def) return fail(Error::NotSupported, where(n), ": no portable kernel for this op");
  std::vector<TensorSpec> inferred(out.size());
  const std::vector<AttrView> views = n.attrs.views();
  ETC_TRY(infer_outputs(*def, AttrList(views), in, inferred));
  for (size_t i = 0; i < out.size(); ++i)
    if (!(out[i] == inferred[i]))
      return fail(Error::Internal, where(n), ": output ", std::to_string(i), " typed ", type_str(out[i]),
                  " but its op computes ", type_str(inferred[i]));
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
                  "') is ", type_str(a), " but its lowered module expects ", type_str(b));
  }
  return Status::Ok();
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
        if (n.is_delegate_call()) return fail(Error::Internal, where(n), ": a delegate input is absent");
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
    if (!n.is_delegate_call()) ETC_TRY(check_op_types(n, in, out));
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
