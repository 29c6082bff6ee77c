#include "preprocessors/demo/demo_preprocess.h"

#include <catch2/catch.hpp>
#include <string>

#include "compiler/common/compile_error.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

std::string blob_text(const PreprocessResult& r) {
  return std::string(r.processed_bytes.begin(), r.processed_bytes.end());
}

TEST_CASE("demo preprocess writes the readable program, fusing mul into add", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto y = b.input("y", DType::Float32, {2, 3});
  const auto w = b.constant_f32("w", {2, 3}, {0.5f, 1, -2, 3, 0.25f, -1});
  const auto m = b.op(EdgeOp::Mul, {x, y});  // handle 1
  const auto a = b.op(EdgeOp::Add, {m, w});  // handle 2
  const auto r = b.op(EdgeOp::Relu, {a});    // handle 3
  const auto s = b.op(EdgeOp::Sin, {r});     // handle 4
  const auto c = b.op(EdgeOp::Cos, {r});     // handle 5
  const auto d = b.op(EdgeOp::Sub, {s, c});  // handle 6
  b.output(d);
  b.output(r);
  const ir::ExportedProgram partition = b.build();

  const PreprocessResult result = demo::DemoBackendDetails().preprocess(partition, {});
  CHECK(blob_text(result) ==
        "etc-demo-program 2\n"
        "input in0 6\n"
        "input in1 6\n"
        "output out0 6\n"
        "output out1 6\n"
        "const c0 6 0.5 1 -2 3 0.25 -1\n"
        "buffer t0 6\n"
        "buffer t1 6\n"
        "buffer t2 6\n"
        "mul_add t0 in0 in1 c0 #mul_1+add_2\n"
        "relu out1 t0 #relu_3\n"
        "sin t1 out1 #sin_4\n"
        "cos t2 out1 #cos_5\n"
        "sub out0 t1 t2 #sub_6\n");
  const auto& map = std::get<StringDelegateDebugMap>(result.debug_handle_map);
  CHECK(map == StringDelegateDebugMap{
                   {"mul_1+add_2", {1, 2}}, {"relu_3", {3}}, {"sin_4", {4}}, {"cos_5", {5}}, {"sub_6", {6}}});
}

TEST_CASE("demo preprocess fuses at the add when its other operand comes later", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {4});
  const auto m = b.op(EdgeOp::Mul, {x, x});  // handle 1
  const auto s = b.op(EdgeOp::Sin, {x});     // handle 2, between the mul and the add
  const auto a = b.op(EdgeOp::Add, {s, m});  // handle 3
  b.output(a);
  const PreprocessResult result = demo::DemoBackendDetails().preprocess(b.build(), {});
  CHECK(blob_text(result) ==
        "etc-demo-program 2\n"
        "input in0 4\n"
        "output out0 4\n"
        "buffer t0 4\n"
        "sin t0 in0 #sin_2\n"
        "mul_add out0 in0 in0 t0 #mul_1+add_3\n");
  CHECK(std::get<StringDelegateDebugMap>(result.debug_handle_map) ==
        StringDelegateDebugMap{{"sin_2", {2}}, {"mul_1+add_3", {1, 3}}});
}

TEST_CASE("demo preprocess keeps a mul whose product is also read elsewhere", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3});
  const auto m = b.op(EdgeOp::Mul, {x, x});
  const auto a = b.op(EdgeOp::Add, {m, x});
  b.output(a);
  b.output(m);
  const PreprocessResult result = demo::DemoBackendDetails().preprocess(b.build(), {});
  CHECK(blob_text(result) ==
        "etc-demo-program 2\n"
        "input in0 3\n"
        "output out0 3\n"
        "output out1 3\n"
        "mul out1 in0 in0 #mul_1\n"
        "add out0 out1 in0 #add_2\n");
}

TEST_CASE("demo identifiers are made unique and free of spaces", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2});
  const auto s = b.op(EdgeOp::Sin, {x});
  const auto c = b.op(EdgeOp::Cos, {s});
  b.output(c);
  ir::ExportedProgram partition = b.build();
  for (ir::Node& n : partition.graph.nodes()) n.meta.onnx_name = "same name";
  const PreprocessResult result = demo::DemoBackendDetails().preprocess(partition, {});
  CHECK(blob_text(result).find("sin t0 in0 #same_name\ncos out0 t0 #same_name~2\n") != std::string::npos);
  CHECK(std::get<StringDelegateDebugMap>(result.debug_handle_map).size() == 2);
}

TEST_CASE("demo preprocess fuses only one product into an add of two products", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3});
  const auto z = b.input("z", DType::Float32, {3});
  const auto p = b.op(EdgeOp::Mul, {x, x});  // handle 1: fuses
  const auto q = b.op(EdgeOp::Mul, {x, z});  // handle 2: stays
  b.output(b.op(EdgeOp::Add, {p, q}));       // handle 3
  const PreprocessResult result = demo::DemoBackendDetails().preprocess(b.build(), {});
  CHECK(blob_text(result) ==
        "etc-demo-program 2\n"
        "input in0 3\n"
        "input in1 3\n"
        "output out0 3\n"
        "buffer t0 3\n"
        "mul t0 in0 in1 #mul_2\n"
        "mul_add out0 in0 in0 t0 #mul_1+add_3\n");
  CHECK(std::get<StringDelegateDebugMap>(result.debug_handle_map) ==
        StringDelegateDebugMap{{"mul_2", {2}}, {"mul_1+add_3", {1, 3}}});
}

TEST_CASE("demo preprocess rejects an op it cannot run, naming the node", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {3});
  b.output(b.op(EdgeOp::Tanh, {x}));
  REQUIRE_THROWS_WITH(demo::DemoBackendDetails().preprocess(b.build(), {}),
                      Catch::Contains("'tanh_1' (tanh)") && Catch::Contains("has no 'tanh'"));
}

TEST_CASE("demo preprocess rejects broadcasting and other dtypes", "[demo][backend]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 3});
  const auto y = b.input("y", DType::Float32, {3});
  b.output(b.op(EdgeOp::Add, {x, y}));
  REQUIRE_THROWS_WITH(demo::DemoBackendDetails().preprocess(b.build(), {}),
                      Catch::Contains("does not broadcast"));

  GraphBuilder i;
  const auto n = i.input("n", DType::Int32, {3});
  i.output(i.op(EdgeOp::Add, {n, n}));
  REQUIRE_THROWS_WITH(demo::DemoBackendDetails().preprocess(i.build(), {}), Catch::Contains("float32 only"));
}

}  // namespace
}  // namespace etc
