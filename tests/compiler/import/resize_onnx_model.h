#pragma once
// A small in-memory ONNX model builder for the resize and rnn lowering tests.

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/graph.h"
#include "tests/support/temp_files.h"

namespace etc::test {

// A model file that is deleted when this goes out of scope.
struct SavedModel {
  std::string path;
  explicit SavedModel(std::string p) : path(std::move(p)) {}
  SavedModel(const SavedModel&) = delete;
  ~SavedModel() { std::remove(path.c_str()); }
};

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }

  OnnxModel& input(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    typed(model_.mutable_graph()->add_input(), name, elem_type, dims);
    return *this;
  }
  OnnxModel& output(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    typed(model_.mutable_graph()->add_output(), name, elem_type, dims);
    return *this;
  }
  // An output of symbolic dims only: ONNX gives no static output type.
  OnnxModel& output_symbolic(const std::string& name, int elem_type, int rank) {
    onnx::ValueInfoProto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (int d = 0; d < rank; ++d) tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(d));
    return *this;
  }
  OnnxModel& floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    onnx::TensorProto* t = init(name, onnx::TensorProto::FLOAT, dims);
    for (float f : v) t->add_float_data(f);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_node");
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  // Writes the model to a fresh file under /tmp.
  SavedModel save() const {
    static std::atomic<int> counter{0};
    const std::string path =
        etc::testing::test_temp_path("lowering_test_" + std::to_string(counter++) + ".onnx");
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return SavedModel{path};
  }

 private:
  static void typed(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                    const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  onnx::TensorProto* init(const std::string& name, int type, const std::vector<int64_t>& dims) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }

  onnx::ModelProto model_;
};

inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& s) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(s);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& s : v) a->add_strings(s);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

// The only live node of op `op` in a program.
inline const ir::Node* find_node(const ir::ExportedProgram& p, EdgeOp op) {
  for (const ir::Node& n : p.graph.nodes())
    if (!n.dead && n.op == op) return &n;
  return nullptr;
}

}  // namespace etc::test
