// Bounded dynamic shapes: a model compiled once for a range of input sizes
// runs at any size within it (Method::resize_input), alternating sizes
// included, with the outputs of a program compiled for that size; sizes
// outside the range, and models whose program would differ between sizes,
// are refused with errors naming the input, dimension or node.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "partitioners/demo/demo_partitioner.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

namespace etc {
namespace {

using namespace testing::onnx_builder;

void float_tensor(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                  std::mt19937& rng) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (float v : testing::random_floats(static_cast<size_t>(n), rng, -0.5f, 0.5f)) t->add_float_data(v);
}

void ints_attr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// x [1, 3, H, W] (H, W dynamic) -> conv 3x3 stride 2 -> relu -> resize x2
// (to the size of the input's shape: Shape -> Slice -> Concat -> sizes)
// -> + a global average (squeeze-and-excitation style) -> y [1, 4, H', W'].
onnx::ModelProto fully_convolutional() {
  std::mt19937 rng(4);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("fcn");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"1", "3", "h", "w"}) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (std::string(d) == "1" || std::string(d) == "3")
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  float_tensor(g, "w", {4, 3, 3, 3}, rng);
  float_tensor(g, "b", {4}, rng);
  auto* conv = add_node(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  ints_attr(conv, "pads", {1, 1, 1, 1});
  ints_attr(conv, "strides", {2, 2});
  add_node(g, "Relu", {"c"}, {"r"}, "relu");
  // sizes = [1, 4] ++ 2 * shape(r)[2:]
  add_node(g, "Shape", {"r"}, {"shape"}, "shape");
  int_tensor(g, "two_axes_start", {2});
  int_tensor(g, "two_axes_end", {4});
  int_tensor(g, "two", {2});
  int_tensor(g, "head", {1, 4});
  add_node(g, "Slice", {"shape", "two_axes_start", "two_axes_end"}, {"hw"}, "spatial");
  add_node(g, "Mul", {"hw", "two"}, {"hw2"}, "double");
  int_attr(add_node(g, "Concat", {"head", "hw2"}, {"sizes"}, "sizes"), "axis", 0);
  auto* resize = add_node(g, "Resize", {"r", "", "", "sizes"}, {"up"}, "upsample");
  auto* mode = resize->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("nearest");
  add_node(g, "GlobalAveragePool", {"up"}, {"mean"}, "squeeze");
  add_node(g, "Add", {"up", "mean"}, {"y"}, "excite");
  auto* out = g->add_output();
  out->set_name("y");
  auto* ot = out->mutable_type()->mutable_tensor_type();
  ot->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"n", "c", "oh", "ow"}) ot->mutable_shape()->add_dim()->set_dim_param(d);
  return m;
}

ir::ExportedProgram compile_range(const std::string& path, Shape lo, Shape hi) {
  onnx_import::ImportOptions options;
  options.input_shapes["x"] = hi;
  options.input_min_shapes["x"] = lo;
  return compile_onnx(path, options);
}

// The same, with XNNPACK taking what it can: its delegates resize too.
ir::ExportedProgram compile_range_xnnpack(const std::string& path, Shape lo, Shape hi) {
  onnx_import::ImportOptions options;
  options.input_shapes["x"] = hi;
  options.input_min_shapes["x"] = lo;
  std::vector<ShapeProbe> probes;
  const ir::ExportedProgram program = compile_onnx(path, options, nullptr, &probes);
  REQUIRE_FALSE(probes.empty());
  return lower_to_backends(program, probes, xnnpack::XnnpackPartitioner());
}

ir::ExportedProgram compile_fixed(const std::string& path, Shape shape) {
  onnx_import::ImportOptions options;
  options.input_shapes["x"] = shape;
  return compile_onnx(path, options);
}

struct Loaded {
  std::vector<uint8_t> bytes;
  Program program;
  std::unique_ptr<Method> method;
};

std::unique_ptr<Loaded> load(const ir::ExportedProgram& p, const RuntimeOptions& options = {}) {
  auto l = std::make_unique<Loaded>();
  l->bytes = emit::serialize_program(p);
  auto program = Program::load_from_data(FileData::borrow(l->bytes.data(), l->bytes.size()), "dynamic.etp");
  REQUIRE(program.ok());
  l->program = std::move(program).get();
  auto method = Method::init(l->program, 0, options);
  REQUIRE(method.ok());
  l->method = std::move(method).get();
  return l;
}

std::vector<float> run_at(Method& m, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<float> x = testing::random_floats(static_cast<size_t>(shape.numel()), rng, -1, 1);
  const Status resized = m.resize_input(0, shape);
  REQUIRE(resized.ok());
  REQUIRE(m.set_input(0, TensorSpec{DType::Float32, shape}, x.data()).ok());
  REQUIRE(m.execute().ok());
  const auto* p = static_cast<const float*>(m.output(0).data);
  return std::vector<float>(p, p + m.output(0).numel());
}

}  // namespace

TEST_CASE("a program compiled for a range of sizes runs at each like one compiled for it", "[dynamic]") {
  const std::string path = save(fully_convolutional(), "dynamic_fcn");
  const auto ranged = load(compile_range(path, Shape{1, 3, 8, 8}, Shape{1, 3, 40, 48}));
  Method& m = *ranged->method;
  CHECK(m.input_min_shape(0) == Shape{1, 3, 8, 8});
  CHECK(m.input_max_shape(0) == Shape{1, 3, 40, 48});
  // Alternating sizes, the smallest and the largest included.
  const std::vector<Shape> sizes{
      {1, 3, 40, 48}, {1, 3, 8, 8}, {1, 3, 17, 30}, {1, 3, 40, 48}, {1, 3, 17, 30}};
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Shape& shape = sizes[k];
    INFO("input " << shape.str());
    const std::vector<float> got = run_at(m, shape, static_cast<uint32_t>(k));
    CHECK(m.output(0).spec.shape == Shape{1, 4, 2 * ((shape[2] + 1) / 2), 2 * ((shape[3] + 1) / 2)});
    const auto fixed = load(compile_fixed(path, shape));
    const std::vector<float> want = run_at(*fixed->method, shape, static_cast<uint32_t>(k));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
  }
}

TEST_CASE("sizes outside the compiled range are refused, naming the input and dimension", "[dynamic]") {
  const std::string path = save(fully_convolutional(), "dynamic_bounds");
  const auto ranged = load(compile_range(path, Shape{1, 3, 8, 8}, Shape{1, 3, 40, 48}));
  Method& m = *ranged->method;
  const Status above = m.resize_input(0, Shape{1, 3, 41, 20});
  CHECK_FALSE(above.ok());
  CHECK_THAT(above.message(), Catch::Contains("input 'x' dim 2 is 41") && Catch::Contains("8..40"));
  const Status below = m.resize_input(0, Shape{1, 3, 20, 7});
  CHECK_THAT(below.message(), Catch::Contains("dim 3 is 7") && Catch::Contains("8..48"));
  const Status channels = m.resize_input(0, Shape{1, 4, 20, 20});
  CHECK_THAT(channels.message(), Catch::Contains("dim 1 is 4") && Catch::Contains("range 3 "));
  CHECK_THAT(m.resize_input(0, Shape{3, 20, 20}).message(), Catch::Contains("rank 4"));
  // A refused resize leaves the method as it was: it still runs at its shape.
  CHECK(m.input_spec(0).shape == Shape{1, 3, 40, 48});
  CHECK(run_at(m, Shape{1, 3, 40, 48}, 1).size() == 4u * 40 * 48);
  // A fixed input names the flag that would make it dynamic.
  const auto fixed = load(compile_fixed(path, Shape{1, 3, 16, 16}));
  CHECK_THAT(fixed->method->resize_input(0, Shape{1, 3, 8, 8}).message(),
             Catch::Contains("fixed shape") && Catch::Contains("--input-shape x="));
}

// Self-attention over a sequence of dynamic length T: x [1, T, 8] -> q, k
// (fully connected) -> q kᵀ (the transpose folded into the product's
// strides) -> softmax -> · x -> y [1, T, 8].
onnx::ModelProto attention() {
  std::mt19937 rng(9);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("attention");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_param("t");
  tt->mutable_shape()->add_dim()->set_dim_value(8);
  float_tensor(g, "wq", {8, 8}, rng);
  float_tensor(g, "wk", {8, 8}, rng);
  add_node(g, "MatMul", {"x", "wq"}, {"q"}, "query");
  add_node(g, "MatMul", {"x", "wk"}, {"k"}, "key");
  ints_attr(add_node(g, "Transpose", {"k"}, {"kt"}, "key_t"), "perm", {0, 2, 1});
  add_node(g, "MatMul", {"q", "kt"}, {"scores"}, "scores");
  int_attr(add_node(g, "Softmax", {"scores"}, {"p"}, "softmax"), "axis", -1);
  add_node(g, "MatMul", {"p", "x"}, {"y"}, "mix");
  auto* out = g->add_output();
  out->set_name("y");
  *out->mutable_type() = in->type();
  return m;
}

// y, flattened to [1, 4, H*W] through a Reshape whose target is computed
// from Shape(y); then, with `half`, only its first half along the last axis
// (Slice ends = size / 2, also computed from Shape).
onnx::ModelProto flattened(bool half) {
  onnx::ModelProto m = fully_convolutional();
  onnx::GraphProto* g = m.mutable_graph();
  add_node(g, "Shape", {"y"}, {"y_shape"}, "y_shape");
  add_node(g, "Slice", {"y_shape", "two_axes_start", "two_axes_end"}, {"y_hw"}, "y_hw");
  add_node(g, "ReduceProd", {"y_hw"}, {"y_area"}, "area");
  int_attr(add_node(g, "Concat", {"head", "y_area"}, {"flat_shape"}, "flat_shape"), "axis", 0);
  add_node(g, "Reshape", {"y", "flat_shape"}, {"flat"}, "flatten_to_area");
  std::string out = "flat";
  if (half) {
    int_tensor(g, "zero", {0});
    int_tensor(g, "last", {2});
    add_node(g, "Div", {"y_area", "two"}, {"half_area"}, "half_area");
    add_node(g, "Slice", {"flat", "zero", "half_area", "last"}, {"first_half"}, "first_half");
    out = "first_half";
  }
  g->mutable_output(0)->set_name(out);
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->RemoveLast();
  return m;
}

TEST_CASE("a Reshape to a target computed from the input's size follows the input", "[dynamic]") {
  const std::string path = save(flattened(false), "dynamic_flatten");
  const auto ranged = load(compile_range(path, Shape{1, 3, 8, 8}, Shape{1, 3, 24, 32}));
  for (const Shape& shape : {Shape{1, 3, 24, 32}, Shape{1, 3, 9, 14}, Shape{1, 3, 8, 8}}) {
    INFO("input " << shape.str());
    const std::vector<float> got = run_at(*ranged->method, shape, 5);
    const auto fixed = load(compile_fixed(path, shape));
    const std::vector<float> want = run_at(*fixed->method, shape, 5);
    CHECK(ranged->method->output(0).spec == fixed->method->output(0).spec);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
  }
}

TEST_CASE("a model whose program changes with the input's size is refused naming the node", "[dynamic]") {
  // The Slice's end is half the size: neither fixed nor the input's end.
  const std::string path = save(flattened(true), "dynamic_half");
  CHECK_NOTHROW(compile_fixed(path, Shape{1, 3, 16, 16}));
  CHECK_THROWS_WITH(compile_range(path, Shape{1, 3, 8, 8}, Shape{1, 3, 16, 16}),
                    Catch::Contains("'first_half'") && Catch::Contains("one program cannot serve") &&
                        Catch::Contains("attribute ends"));
}

TEST_CASE("XNNPACK delegates resize with the program, alternating sizes", "[dynamic][xnnpack]") {
  struct Case {
    std::string name;
    onnx::ModelProto model;
    Shape lo, hi;
    std::vector<Shape> sizes;
  };
  const std::vector<Case> cases{
      {"fcn",
       fully_convolutional(),
       {1, 3, 8, 8},
       {1, 3, 40, 48},
       {{1, 3, 40, 48},
        {1, 3, 8, 8},
        {1, 3, 17, 30},
        {1, 3, 8, 8},
        {1, 3, 40, 48},
        {1, 3, 23, 9},
        {1, 3, 17, 30}}},
      {"flatten",
       flattened(false),
       {1, 3, 8, 8},
       {1, 3, 24, 32},
       {{1, 3, 9, 14}, {1, 3, 24, 32}, {1, 3, 9, 14}}},
      {"attention",
       attention(),
       {1, 2, 8},
       {1, 64, 8},
       {{1, 64, 8}, {1, 2, 8}, {1, 37, 8}, {1, 2, 8}, {1, 37, 8}}},
  };
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string path = save(c.model, "dynamic_xnnpack_" + c.name);
    const ir::ExportedProgram lowered = compile_range_xnnpack(path, c.lo, c.hi);
    REQUIRE(lowered.delegates.size() == 1);
    const auto ranged = load(lowered);
    for (size_t k = 0; k < c.sizes.size(); ++k) {
      const Shape& shape = c.sizes[k];
      INFO("input " << shape.str());
      const std::vector<float> got = run_at(*ranged->method, shape, static_cast<uint32_t>(k));
      const auto fixed = load(compile_fixed(path, shape));
      const std::vector<float> want = run_at(*fixed->method, shape, static_cast<uint32_t>(k));
      CHECK(ranged->method->output(0).spec == fixed->method->output(0).spec);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
    }
  }
}

TEST_CASE("the portable fallback of a resizable delegate runs at alternating sizes", "[dynamic][fallback]") {
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  const std::string path = save(fully_convolutional(), "dynamic_fallback");
  ir::ExportedProgram lowered = compile_range_xnnpack(path, Shape{1, 3, 8, 8}, Shape{1, 3, 40, 48});
  attach_fallbacks(lowered);
  RuntimeOptions options;
  options.disabled_backends = {"xnnpack"};
  const auto ranged = load(lowered, options);
  REQUIRE(ranged->method->num_fallbacks_used() == 1);
  for (const Shape& shape :
       {Shape{1, 3, 17, 30}, Shape{1, 3, 40, 48}, Shape{1, 3, 8, 8}, Shape{1, 3, 17, 30}}) {
    INFO("input " << shape.str());
    const std::vector<float> got = run_at(*ranged->method, shape, 3);
    const auto fixed = load(compile_fixed(path, shape));
    CHECK(got == run_at(*fixed->method, shape, 3));
  }
}

TEST_CASE("a delegate that cannot follow the input's size is refused when compiling", "[dynamic][xnnpack]") {
  // The demo backend has no resize: its delegates are refused, naming it.
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  onnx::ModelProto m = model_with_input();  // x [n, 3] -> sin -> y
  for (auto* v : {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_output(0)})
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("n");
  add_node(m.mutable_graph(), "Sin", {"x"}, {"y"}, "sine");
  const std::string path = save(m, "dynamic_demo");
  onnx_import::ImportOptions options;
  options.input_shapes["x"] = Shape{4, 3};
  options.input_min_shapes["x"] = Shape{1, 3};
  std::vector<ShapeProbe> probes;
  const ir::ExportedProgram program = compile_onnx(path, options, nullptr, &probes);
  CHECK_THROWS_WITH(lower_to_backends(program, probes, demo::DemoPartitioner()),
                    Catch::Contains("backend 'demo'") && Catch::Contains("cannot resize") &&
                        Catch::Contains("smallest shapes"));
  // A program built without the probes cannot be checked: the runtime refuses
  // to resize it instead, naming the delegate.
  const auto unchecked = load(to_backend(program, demo::DemoPartitioner()));
  const Status s = unchecked->method->resize_input(0, Shape{2, 3});
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("delegate 0") && Catch::Contains("backend 'demo'"));
}

}  // namespace etc
