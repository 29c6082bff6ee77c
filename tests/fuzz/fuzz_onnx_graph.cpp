// Fuzz target: a structured generator of valid-looking ONNX graphs. The bytes
// choose a chain of up to four nodes from ops the importer lowers, their
// attributes from values at the edges (0, negative, huge) and their inputs:
// graph inputs of any rank with dims from 0 to 2^40, or constants holding
// extreme integers. The model then goes the whole way (compile_and_run), so
// what shape inference, the lowerings and the count limits let through must
// load, initialize and run.
#include <onnx/onnx_pb.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_compile.h"
#include "tests/fuzz/fuzz_support.h"

namespace etc::fuzz {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;
constexpr int64_t kDims[] = {1, 1, 2, 3, 4, 7, 16, 0, 64, 1000, int64_t{1} << 31, kBig};
constexpr int64_t kInts[] = {0,     1,    2,
                             3,     -1,   -2,
                             4,     7,    std::numeric_limits<int64_t>::max(),
                             64,    -5,   kBig,
                             -kBig, 1000, std::numeric_limits<int64_t>::min()};
constexpr float kFloats[] = {0.0f,
                             1.0f,
                             -1.0f,
                             0.5f,
                             2.0f,
                             1e30f,
                             -1e30f,
                             1e-30f,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};

enum class Attr { kInt, kInts, kFloat, kString };
struct AttrDef {
  const char* name;
  Attr kind;
  const char* const* strings = nullptr;  // choices for kString
  int num_strings = 0;
  bool required = false;  // always set (the checker refuses the node without it)
};
struct OpDef {
  const char* type;
  int min_inputs, max_inputs, outputs;
  std::vector<AttrDef> attrs;
};

const char* const kAutoPad[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "bogus"};
const char* const kResizeMode[] = {"nearest", "linear", "cubic", "bogus"};
const char* const kCoordMode[] = {"half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"};
const char* const kPadMode[] = {"constant", "reflect", "edge", "wrap"};
const char* const kDepthMode[] = {"DCR", "CRD"};
const char* const kDirection[] = {"forward", "reverse", "bidirectional"};
const char* const kReduction[] = {"none", "add", "mul", "max", "min", "bogus"};

const std::vector<OpDef>& ops() {
  static const std::vector<AttrDef> conv = {
      {"strides", Attr::kInts}, {"dilations", Attr::kInts}, {"kernel_shape", Attr::kInts},
      {"pads", Attr::kInts},    {"group", Attr::kInt},      {"auto_pad", Attr::kString, kAutoPad, 5}};
  static const std::vector<AttrDef> max_pool = {
      {"strides", Attr::kInts}, {"dilations", Attr::kInts}, {"kernel_shape", Attr::kInts, nullptr, 0, true},
      {"pads", Attr::kInts},    {"ceil_mode", Attr::kInt},  {"auto_pad", Attr::kString, kAutoPad, 5}};
  static const std::vector<AttrDef> avg_pool = {{"strides", Attr::kInts},
                                                {"kernel_shape", Attr::kInts, nullptr, 0, true},
                                                {"pads", Attr::kInts},
                                                {"ceil_mode", Attr::kInt},
                                                {"count_include_pad", Attr::kInt},
                                                {"auto_pad", Attr::kString, kAutoPad, 5}};
  static const std::vector<AttrDef> axis = {{"axis", Attr::kInt}};
  static const std::vector<AttrDef> reduce = {{"axes", Attr::kInts}, {"keepdims", Attr::kInt}};
  static const std::vector<OpDef> table = {
      {"Conv", 2, 3, 1, conv},
      {"ConvTranspose", 2, 3, 1, conv},
      {"MaxPool", 1, 1, 1, max_pool},
      {"AveragePool", 1, 1, 1, avg_pool},
      {"GlobalAveragePool", 1, 1, 1, {}},
      {"Add", 2, 2, 1, {}},
      {"Sub", 2, 2, 1, {}},
      {"Mul", 2, 2, 1, {}},
      {"Div", 2, 2, 1, {}},
      {"Mod", 2, 2, 1, {{"fmod", Attr::kInt}}},
      {"Pow", 2, 2, 1, {}},
      {"MatMul", 2, 2, 1, {}},
      {"Gemm", 2, 3, 1, {{"transA", Attr::kInt}, {"transB", Attr::kInt}, {"alpha", Attr::kFloat}}},
      {"Relu", 1, 1, 1, {}},
      {"Sigmoid", 1, 1, 1, {}},
      {"Softmax", 1, 1, 1, axis},
      {"Concat", 1, 3, 1, axis},
      {"Transpose", 1, 1, 1, {{"perm", Attr::kInts}}},
      {"Reshape", 2, 2, 1, {{"allowzero", Attr::kInt}}},
      {"Expand", 2, 2, 1, {}},
      {"Pad", 2, 3, 1, {{"mode", Attr::kString, kPadMode, 4}}},
      {"Tile", 2, 2, 1, {}},
      {"Resize",
       1,
       4,
       1,
       {{"mode", Attr::kString, kResizeMode, 4},
        {"coordinate_transformation_mode", Attr::kString, kCoordMode, 4}}},
      {"Slice", 3, 5, 1, {}},
      {"Gather", 2, 2, 1, axis},
      {"ReduceMean", 1, 1, 1, reduce},
      {"ReduceSum", 1, 2, 1, {{"keepdims", Attr::kInt}}},
      {"Flatten", 1, 1, 1, axis},
      {"Squeeze", 1, 2, 1, {}},
      {"Unsqueeze", 2, 2, 1, {}},
      {"Split", 1, 2, 2, axis},
      {"DepthToSpace",
       1,
       1,
       1,
       {{"blocksize", Attr::kInt, nullptr, 0, true}, {"mode", Attr::kString, kDepthMode, 2}}},
      {"SpaceToDepth", 1, 1, 1, {{"blocksize", Attr::kInt, nullptr, 0, true}}},
      {"LayerNormalization", 1, 3, 1, {{"axis", Attr::kInt}, {"epsilon", Attr::kFloat}}},
      {"BatchNormalization", 5, 5, 1, {{"epsilon", Attr::kFloat}}},
      {"InstanceNormalization", 3, 3, 1, {{"epsilon", Attr::kFloat}}},
      {"LSTM",
       3,
       3,
       1,
       {{"hidden_size", Attr::kInt, nullptr, 0, true}, {"direction", Attr::kString, kDirection, 3}}},
      {"GRU", 3, 3, 1, {{"hidden_size", Attr::kInt, nullptr, 0, true}, {"linear_before_reset", Attr::kInt}}},
      {"TopK", 2, 2, 2, axis},
      {"ArgMax", 1, 1, 1, {{"axis", Attr::kInt}, {"keepdims", Attr::kInt}}},
      {"CumSum", 2, 2, 1, {}},
      {"Range", 3, 3, 1, {}},
      {"ConstantOfShape", 1, 1, 1, {}},
      {"Clip", 1, 3, 1, {}},
      {"Where", 3, 3, 1, {}},
      {"Cast", 1, 1, 1, {{"to", Attr::kInt, nullptr, 0, true}}},
      {"Einsum", 1, 2, 1, {}},
      {"GatherElements", 2, 2, 1, axis},
      {"GatherND", 2, 2, 1, {{"batch_dims", Attr::kInt}}},
      {"ScatterElements", 3, 3, 1, {{"axis", Attr::kInt}, {"reduction", Attr::kString, kReduction, 6}}},
      {"ScatterND", 3, 3, 1, {{"reduction", Attr::kString, kReduction, 6}}},
      {"LRN",
       1,
       1,
       1,
       {{"size", Attr::kInt, nullptr, 0, true}, {"alpha", Attr::kFloat}, {"beta", Attr::kFloat}}},
      {"LpNormalization", 1, 1, 1, {{"axis", Attr::kInt}, {"p", Attr::kInt}}},
      {"MeanVarianceNormalization", 1, 1, 1, {}},
      {"ReduceLogSumExp", 1, 1, 1, reduce},
      {"Shrink", 1, 1, 1, {{"lambd", Attr::kFloat}, {"bias", Attr::kFloat}}},
      {"Celu", 1, 1, 1, {{"alpha", Attr::kFloat}}},
      {"IsInf", 1, 1, 1, {{"detect_negative", Attr::kInt}}},
      {"EyeLike", 1, 1, 1, {{"k", Attr::kInt}}},
      {"QuantizeLinear", 2, 3, 1, {{"axis", Attr::kInt}}},
      {"DequantizeLinear", 2, 3, 1, {{"axis", Attr::kInt}}},
      {"DynamicQuantizeLinear", 1, 1, 3, {}},
  };
  return table;
}

// ONNX element types the generator gives graph inputs and constants.
constexpr int kTypes[] = {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT, onnx::TensorProto::INT64,
                          onnx::TensorProto::INT32, onnx::TensorProto::BOOL,  onnx::TensorProto::UINT8};

void set_type(onnx::TypeProto* type, int elem, const std::vector<int64_t>& dims) {
  auto* t = type->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

class GraphMaker {
 public:
  explicit GraphMaker(ByteReader& in) : in_(in) {}

  onnx::ModelProto make() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(static_cast<int64_t>(in_.one_of(kOpsets)));
    graph_ = model.mutable_graph();
    graph_->set_name("fuzz");
    const size_t nodes = 1 + in_.pick(4);
    for (size_t i = 0; i < nodes; ++i) add_node(i);
    // The checker wants a type on every graph output: guess the first input's
    // element type and rank (right for most ops; a wrong guess is refused).
    for (const std::string& name : last_outputs_) {
      auto* out = graph_->add_output();
      out->set_name(name);
      const Guess& g = guesses_[name];
      auto* t = out->mutable_type()->mutable_tensor_type();
      t->set_elem_type(g.elem);
      auto* shape = t->mutable_shape();
      const int rank = in_.pick(4) == 0 ? static_cast<int>(in_.pick(5)) : g.rank;
      for (int d = 0; d < rank; ++d) shape->add_dim()->set_dim_param("d" + std::to_string(d));
    }
    return model;
  }

 private:
  static constexpr int kOpsets[] = {13, 17, 17, 11, 9};

  std::vector<int64_t> dims() {
    std::vector<int64_t> d(in_.pick(6));
    for (int64_t& v : d) v = in_.one_of(kDims);
    return d;
  }

  std::string graph_input() {
    const std::string name = "in" + std::to_string(graph_->input_size());
    auto* vi = graph_->add_input();
    vi->set_name(name);
    const int elem = in_.one_of(kTypes);
    const std::vector<int64_t> d = dims();
    set_type(vi->mutable_type(), elem, d);
    guesses_[name] = {elem, static_cast<int>(d.size())};
    return name;
  }

  std::string constant() {
    const std::string name = "c" + std::to_string(graph_->initializer_size());
    auto* t = graph_->add_initializer();
    t->set_name(name);
    const bool ints = in_.flag();
    const size_t n = in_.pick(6);
    if (in_.flag()) t->add_dims(static_cast<int64_t>(n));  // else a scalar (n ignored) or 1-D
    const size_t count = t->dims_size() ? n : 1;
    guesses_[name] = {ints ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT, t->dims_size()};
    if (ints) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (size_t i = 0; i < count; ++i) t->add_int64_data(in_.one_of(kInts));
    } else {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (size_t i = 0; i < count; ++i) t->add_float_data(in_.one_of(kFloats));
    }
    return name;
  }

  std::string operand() {
    if (!available_.empty() && in_.pick(3) == 0) return available_[in_.pick(available_.size())];
    return in_.flag() ? graph_input() : constant();
  }

  void add_attr(onnx::NodeProto* node, const AttrDef& a) {
    auto* attr = node->add_attribute();
    attr->set_name(a.name);
    switch (a.kind) {
      case Attr::kInt:
        attr->set_type(onnx::AttributeProto::INT);
        attr->set_i(in_.one_of(kInts));
        break;
      case Attr::kInts: {
        attr->set_type(onnx::AttributeProto::INTS);
        const size_t n = in_.pick(7);
        for (size_t i = 0; i < n; ++i) attr->add_ints(in_.one_of(kInts));
        break;
      }
      case Attr::kFloat:
        attr->set_type(onnx::AttributeProto::FLOAT);
        attr->set_f(in_.one_of(kFloats));
        break;
      case Attr::kString:
        attr->set_type(onnx::AttributeProto::STRING);
        attr->set_s(a.strings[in_.pick(static_cast<size_t>(a.num_strings))]);
        break;
    }
  }

  void add_node(size_t index) {
    const OpDef& op = ops()[in_.pick(ops().size())];
    auto* node = graph_->add_node();
    node->set_op_type(op.type);
    node->set_name("n" + std::to_string(index));
    const int inputs =
        op.min_inputs + static_cast<int>(in_.pick(static_cast<size_t>(op.max_inputs - op.min_inputs + 1)));
    for (int i = 0; i < inputs; ++i) node->add_input(operand());
    for (const AttrDef& a : op.attrs)
      if (a.required || in_.flag()) add_attr(node, a);
    if (std::string(op.type) == "Einsum") {
      auto* attr = node->add_attribute();
      attr->set_name("equation");
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(inputs == 1 ? "ij->ji" : "ij,jk->ik");
    }
    last_outputs_.clear();
    const Guess first = guesses_[node->input(0)];
    for (int o = 0; o < op.outputs; ++o) {
      const std::string name = "t" + std::to_string(index) + "_" + std::to_string(o);
      guesses_[name] = first;
      node->add_output(name);
      available_.push_back(name);
      last_outputs_.push_back(name);
    }
  }

  struct Guess {
    int elem = onnx::TensorProto::FLOAT;
    int rank = 0;
  };

  ByteReader& in_;
  onnx::GraphProto* graph_ = nullptr;
  std::map<std::string, Guess> guesses_;  // element type and rank of each value, as far as known
  std::vector<std::string> available_;
  std::vector<std::string> last_outputs_;
};

}  // namespace
}  // namespace etc::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etc::fuzz;
  ByteReader in(data, size);
  const Delegation delegation = static_cast<Delegation>(in.pick(3));
  const onnx::ModelProto model = GraphMaker(in).make();
  const std::string bytes = model.SerializeAsString();
  const std::string path =
      write_scratch(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), ".onnx");
  compile_and_run(path, delegation, in.rest(), in.rest_size());
  return 0;
}
