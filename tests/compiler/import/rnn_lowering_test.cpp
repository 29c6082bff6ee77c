#include <catch2/catch.hpp>

#include "compiler/common/compile_error.h"
#include "compiler/import/onnx/importer.h"
#include "tests/compiler/import/resize_onnx_model.h"

using etc::test::OnnxModel;
using etc::test::set_attr;

namespace {

OnnxModel lstm_model(const std::vector<std::string>& activations, const std::vector<float>& alpha) {
  OnnxModel m(14);
  m.input("X", onnx::TensorProto::FLOAT, {2, 1, 3}).output("Y", onnx::TensorProto::FLOAT, {2, 1, 1, 2});
  m.floats("W", {1, 8, 3}, std::vector<float>(24, 0.1f));
  m.floats("R", {1, 8, 2}, std::vector<float>(16, 0.2f));
  onnx::NodeProto& n = m.node("LSTM", {"X", "W", "R"}, {"Y"});
  set_attr(n, "activations", activations);
  if (!alpha.empty()) set_attr(n, "activation_alpha", alpha);
  return m;
}

}  // namespace

TEST_CASE("LSTM activation alphas go to the activations that take one, in order", "[rnn][lowering]") {
  const auto program = etc::onnx_import::import_onnx(
      lstm_model({"HardSigmoid", "Tanh", "LeakyRelu"}, {0.3f, 0.1f}).save().path);
  const etc::ir::Node* n = etc::test::find_node(program, etc::EdgeOp::Lstm);
  REQUIRE(n != nullptr);
  CHECK(std::get<std::vector<int64_t>>(*n->attrs.find("activations")) == std::vector<int64_t>{7, 1, 4});
  CHECK(std::get<std::vector<float>>(*n->attrs.find("activation_alpha")) ==
        std::vector<float>{0.3f, 0.0f, 0.1f});
  // HardSigmoid's beta was not given: the ONNX default 0.5 is filled in.
  CHECK(std::get<std::vector<float>>(*n->attrs.find("activation_beta"))[0] == 0.5f);
  CHECK(n->outputs.size() == 1);  // only Y is used
}

TEST_CASE("LSTM with an unknown activation is rejected naming it", "[rnn][lowering]") {
  try {
    (void)etc::onnx_import::import_onnx(lstm_model({"Sigmoid", "Gelu", "Tanh"}, {}).save().path);
    FAIL("expected a CompileError");
  } catch (const etc::CompileError& e) {
    CHECK(std::string(e.what()).find("activation 'Gelu' is not supported") != std::string::npos);
  }
}

TEST_CASE("A bidirectional GRU without activations takes the defaults for both directions",
          "[rnn][lowering]") {
  // The forward list is repeated for the reverse direction (torch exports
  // bidirectional GRUs and LSTMs this way).
  OnnxModel m(14);
  m.input("X", onnx::TensorProto::FLOAT, {2, 1, 3}).output("Y", onnx::TensorProto::FLOAT, {2, 2, 1, 2});
  m.floats("W", {2, 6, 3}, std::vector<float>(36, 0.1f));
  m.floats("R", {2, 6, 2}, std::vector<float>(24, 0.2f));
  onnx::NodeProto& n = m.node("GRU", {"X", "W", "R"}, {"Y"});
  set_attr(n, "direction", std::string("bidirectional"));
  const auto program = etc::onnx_import::import_onnx(m.save().path);
  const etc::ir::Node* gru = etc::test::find_node(program, etc::EdgeOp::Gru);
  REQUIRE(gru != nullptr);
  CHECK(std::get<std::vector<int64_t>>(*gru->attrs.find("activations")) == std::vector<int64_t>{0, 1, 0, 1});
}
