#include "compiler/ir/verifier.h"

#include <string>

#include "compiler/ir/printer.h"
#include "runtime/kernels/kernel.h"

namespace etc::ir {

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
    const std::string where = "node " + std::to_string(n.id) + " (" + describe(n) + ")";
    std::vector<TensorSpec> in, out, inferred;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) {
        in.emplace_back();
        continue;
      }
      if (v < 0 || static_cast<size_t>(v) >= nv)
        return fail(Error::Internal, where, ": input id out of range");
      if (!defined[v])
        return fail(Error::Internal, where, ": reads '", g.value(v).name, "' before it is defined");
      in.push_back(g.value(v).spec);
    }
    for (ValueId v : n.outputs) {
      if (v < 0 || static_cast<size_t>(v) >= nv)
        return fail(Error::Internal, where, ": output id out of range");
      if (defined[v]) return fail(Error::Internal, where, ": '", g.value(v).name, "' is defined twice");
      defined[v] = true;
      out.push_back(g.value(v).spec);
    }
    const OpDef* def = find_op_def(n.op);
    if (!def) return fail(Error::NotSupported, where, ": no portable kernel for this op");
    inferred.resize(out.size());
    const std::vector<AttrView> views = n.attrs.views();
    ETC_TRY(infer_outputs(*def, AttrList(views), in, inferred));
    for (size_t i = 0; i < out.size(); ++i)
      if (!(out[i] == inferred[i]))
        return fail(Error::Internal, where, ": output ", std::to_string(i), " typed ",
                    dtype_name(out[i].dtype), out[i].shape.str(), " but its op computes ",
                    dtype_name(inferred[i].dtype), inferred[i].shape.str());
  }
  for (ValueId v : g.outputs())
    if (v < 0 || static_cast<size_t>(v) >= nv || !defined[v])
      return fail(Error::Internal, "graph output is not defined");
  return Status::Ok();
}

}  // namespace etc::ir
