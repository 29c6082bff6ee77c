#include "preprocessors/demo/demo_preprocess.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "compiler/backend/delegate_mapping_builder.h"
#include "compiler/common/compile_error.h"
#include "partitioners/demo/demo_partitioner.h"
#include "runtime/backends/demo/demo_format.h"

namespace etc::demo {
namespace {

std::string describe(const ir::ExportedProgram& p, const ir::Node& n) {
  return p.source_path + ": node '" + n.meta.onnx_name + "' (" + n.meta.onnx_op_type + ")";
}

std::string format_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(v));
  return buf;
}

// Operand names (in<i>, out<i>, c<i>, t<i>) and their declaration lines.
class OperandTable {
 public:
  // `unused[v]`: value v is never read or written (a fused product).
  OperandTable(const ir::Graph& g, const std::vector<bool>& unused) : names_(g.values().size()) {
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const ir::Value& v = g.value(g.inputs()[i]);
      if (v.spec.dtype != DType::Float32)
        throw CompileError("demo partition input '" + v.name + "' is " + dtype_name(v.spec.dtype) +
                           ", the demo backend computes float32 only");
      declare(v, "input", "in" + std::to_string(i));
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const ir::Value& v = g.value(g.outputs()[i]);
      if (!names_[v.id].empty())
        throw CompileError("demo partition output '" + v.name + "' is also an input or an earlier output");
      declare(v, "output", "out" + std::to_string(i));
    }
    int consts = 0, temps = 0;
    for (const ir::Value& v : g.values()) {
      if (!names_[v.id].empty() || unused[v.id]) continue;
      if (!v.is_constant()) {
        declare(v, "buffer", "t" + std::to_string(temps++));
        continue;
      }
      declare(v, "const", "c" + std::to_string(consts++));
      std::string& line = lines_.back();
      line.pop_back();  // the values go on the declaration line
      for (int64_t k = 0; k < v.spec.shape.numel(); ++k)
        line += " " + format_float(v.constant_as<float>()[k]);
      line += "\n";
    }
  }
  const std::string& operator[](ir::ValueId v) const { return names_[v]; }
  std::string declarations() const {
    std::string all;
    for (const std::string& line : lines_) all += line;
    return all;
  }

 private:
  void declare(const ir::Value& v, const char* kind, std::string operand) {
    lines_.push_back(std::string(kind) + " " + operand + " " + std::to_string(v.spec.shape.numel()) + "\n");
    names_[v.id] = std::move(operand);
  }

  std::vector<std::string> names_;
  std::vector<std::string> lines_;
};

// The add that is the only reader of `mul`'s output, when the two may fuse.
const ir::Node* fusable_add(const ir::Graph& g, const ir::Node& mul,
                            const std::vector<std::vector<ir::NodeId>>& users) {
  if (mul.op != EdgeOp::Mul) return nullptr;
  const ir::ValueId product = mul.outputs[0];
  for (ir::ValueId out : g.outputs())
    if (out == product) return nullptr;
  if (users[product].size() != 1) return nullptr;
  const ir::Node& add = g.node(users[product][0]);
  if (add.op != EdgeOp::Add || add.inputs[0] == add.inputs[1]) return nullptr;
  return &add;
}

// String identifiers (the demo backend exercises that kind of debug handle
// map key): the ONNX name of the node, or "mul+add" of a fused pair, with
// anything that is not a visible ASCII character replaced, made unique.
class IdentifierNames {
 public:
  std::string make(const std::vector<const ir::Node*>& nodes) {
    std::string id;
    for (const ir::Node* n : nodes) {
      if (!id.empty()) id += "+";
      id += n->meta.onnx_name.empty() ? std::string(edge_op_name(n->op)) : n->meta.onnx_name;
    }
    for (char& c : id)
      if (c <= ' ' || c > '~') c = '_';
    std::string unique = id;
    for (int k = 2; !used_.insert(unique).second; ++k) unique = id + "~" + std::to_string(k);
    return unique;
  }

 private:
  std::set<std::string> used_;
};

}  // namespace

PreprocessResult DemoBackendDetails::preprocess(const ir::ExportedProgram& partition,
                                                std::span<const CompileSpec> /*compile_specs*/) const {
  const ir::Graph& g = partition.graph;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    const Support s = DemoPartitioner::is_supported(g, n);
    if (!s.supported) throw CompileError(describe(partition, n) + ": " + s.reason);
  }
  const auto users = g.users();
  // A fused mul is emitted at its add, where the add's other operand is ready.
  std::vector<const ir::Node*> fused_mul(g.nodes().size(), nullptr);
  std::vector<bool> unused(g.values().size(), false);
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    const ir::Node* add = fusable_add(g, n, users);
    // An add of two products (a*b + c*d) fuses with the first one only.
    if (add == nullptr || fused_mul[add->id] != nullptr) continue;
    fused_mul[add->id] = &n;
    unused[n.outputs[0]] = true;
  }
  const OperandTable operands(g, unused);
  DelegateMappingBuilder builder;  // manual string identifiers
  IdentifierNames names;
  std::ostringstream code;
  for (const ir::Node& n : g.nodes()) {
    if (n.dead || (n.op == EdgeOp::Mul && unused[n.outputs[0]])) continue;
    if (const ir::Node* mul = fused_mul[n.id]) {
      const ir::ValueId other = n.inputs[0] == mul->outputs[0] ? n.inputs[1] : n.inputs[0];
      const std::vector<const ir::Node*> covers{mul, &n};
      const std::string id = names.make(covers);
      builder.insert_delegate_mapping_entry(covers, id);
      code << "mul_add " << operands[n.outputs[0]] << " " << operands[mul->inputs[0]] << " "
           << operands[mul->inputs[1]] << " " << operands[other] << " #" << id << "\n";
      continue;
    }
    const std::vector<const ir::Node*> covers{&n};
    const std::string id = names.make(covers);
    builder.insert_delegate_mapping_entry(covers, id);
    code << edge_op_name(n.op) << " " << operands[n.outputs[0]];
    for (ir::ValueId in : n.inputs) code << " " << operands[in];
    code << " #" << id << "\n";
  }
  std::string text = std::string(kDemoMagic) + " " + std::to_string(kDemoVersion) + "\n" +
                     operands.declarations() + code.str();
  PreprocessResult result;
  result.processed_bytes.assign(text.begin(), text.end());
  result.debug_handle_map = builder.get_delegate_mapping();
  return result;
}

}  // namespace etc::demo
