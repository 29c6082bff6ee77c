#include <catch2/catch.hpp>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/compiler/import/resize_onnx_model.h"

using etc::test::OnnxModel;

TEST_CASE("Resize-10 lowers to asymmetric coordinates with the legacy nearest rounding",
          "[resize][lowering]") {
  OnnxModel m(10);
  m.input("X", onnx::TensorProto::FLOAT, {1, 1, 2, 3}).output("Y", onnx::TensorProto::FLOAT, {1, 1, 4, 1});
  m.floats("scales", {4}, {1, 1, 2, 0.5f});
  m.node("Resize", {"X", "scales"}, {"Y"});
  const auto program = etc::onnx_import::import_onnx(m.save().path);
  const etc::ir::Node* n = etc::test::find_node(program, etc::EdgeOp::Resize);
  REQUIRE(n != nullptr);
  CHECK(std::get<std::vector<int64_t>>(*n->attrs.find("sizes")) == std::vector<int64_t>{1, 1, 4, 1});
  CHECK(std::get<std::vector<float>>(*n->attrs.find("scales")) == std::vector<float>{1, 1, 2, 0.5f});
  CHECK(std::get<std::string>(*n->attrs.find("coordinate_transformation_mode")) == "asymmetric");
  CHECK(std::get<std::string>(*n->attrs.find("nearest_mode")) == "simple");
}

TEST_CASE("Resize with scales known only at run time takes the declared output shape", "[resize][lowering]") {
  OnnxModel m(13);
  m.input("X", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("scales", onnx::TensorProto::FLOAT, {4});
  m.output("Y", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  m.node("Resize", {"X", "", "scales"}, {"Y"});
  const auto program = etc::onnx_import::import_onnx(m.save().path);
  const etc::ir::Node* n = etc::test::find_node(program, etc::EdgeOp::Resize);
  REQUIRE(n != nullptr);
  CHECK(n->inputs.size() == 2);  // x, scales
  CHECK(std::get<std::vector<int64_t>>(*n->attrs.find("sizes")) == std::vector<int64_t>{1, 1, 4, 4});
  CHECK(n->attrs.find("scales") == nullptr);
}

TEST_CASE("Resize with run-time sizes and an undeclared output type is rejected naming the input",
          "[resize][lowering]") {
  OnnxModel m(13);
  m.input("X", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("sizes", onnx::TensorProto::INT64, {4});
  m.output_symbolic("Y", onnx::TensorProto::FLOAT, 4);
  m.node("Resize", {"X", "", "", "sizes"}, {"Y"});
  try {
    (void)etc::onnx_import::import_onnx(m.save().path);
    FAIL("expected a CompileError");
  } catch (const etc::CompileError& e) {
    const std::string what = e.what();
    CHECK(what.find("Resize") != std::string::npos);
    CHECK(what.find("sizes") != std::string::npos);
    CHECK(what.find("undeclared") != std::string::npos);
  }
}
