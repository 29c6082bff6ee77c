// LSTM and GRU weights packed ahead of time (prepack_rnn.h): which nodes get
// packed forms, what they hold, and programs that run to the same bytes
// with them as without (the kernel runs the same products either way).
#include "compiler/passes/prepack_rnn.h"

#include <catch2/catch.hpp>
#include <random>

#include "compiler/ir/verifier.h"
#include "compiler/passes/pipeline.h"
#include "runtime/kernels/portable/rnn_common.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

constexpr int64_t kSeq = 6, kBatch = 1, kIn = 9, kHidden = 20;

struct Recurrent {
  ir::ExportedProgram program;
  std::vector<std::vector<uint8_t>> inputs;
};

// X -> op (bidirectional, hidden 20) -> Y, W constant unless `w_is_input`
// (then a second graph input), R constant.
Recurrent recurrent(EdgeOp op, int64_t linear_before_reset, bool w_is_input) {
  std::mt19937 rng(7);
  const int64_t gates = op == EdgeOp::Lstm ? 4 : 3;
  GraphBuilder b;
  const ir::ValueId x = b.input("x", DType::Float32, {kSeq, kBatch, kIn});
  const auto w_values = random_floats(static_cast<size_t>(2 * gates * kHidden * kIn), rng);
  const ir::ValueId w = w_is_input ? b.input("w", DType::Float32, {2, gates * kHidden, kIn})
                                   : b.constant_f32("w", {2, gates * kHidden, kIn}, w_values);
  const ir::ValueId r =
      b.constant_f32("r", {2, gates * kHidden, kHidden},
                     random_floats(static_cast<size_t>(2 * gates * kHidden * kHidden), rng));
  ir::Attrs attrs{{"hidden_size", kHidden}, {"direction", std::string("bidirectional")}};
  if (op == EdgeOp::Gru) attrs.set("linear_before_reset", linear_before_reset);
  b.output(b.op(op, {x, w, r}, std::move(attrs)), "y");
  Recurrent out{b.build(), {testing::as_bytes(random_floats(static_cast<size_t>(kSeq * kBatch * kIn), rng))}};
  if (w_is_input) out.inputs.push_back(testing::as_bytes(w_values));
  return out;
}

const ir::Node& only_node(const ir::Graph& g, EdgeOp op) {
  const ir::Node* found = nullptr;
  for (const ir::Node& n : g.nodes())
    if (!n.dead && n.op == op) found = &n;
  REQUIRE(found != nullptr);
  return *found;
}

RnnConfig config_of(const ir::Graph& g, const ir::Node& n) {
  std::vector<TensorSpec> specs;
  for (ir::ValueId v : n.inputs) specs.push_back(v == ir::kNoValue ? TensorSpec{} : g.value(v).spec);
  const std::vector<AttrView> views = n.attrs.views();
  auto c = parse_rnn_config(AttrList(views), specs, n.op == EdgeOp::Lstm);
  REQUIRE(c.ok());
  return c.get();
}

// The packed input `which` of n holds rnn_prepack of its plain weights.
void check_packed(const ir::Graph& g, const ir::Node& n, RnnPacked which) {
  const bool lstm = n.op == EdgeOp::Lstm;
  const size_t slot = static_cast<size_t>(rnn_packed_input(lstm, which));
  REQUIRE(n.inputs.size() > slot);
  const ir::Value& packed = g.value(n.inputs[slot]);
  REQUIRE(packed.is_constant());
  const RnnConfig c = config_of(g, n);
  const int64_t floats = rnn_prepacked_floats(c, which);
  CHECK(packed.spec == TensorSpec{DType::Float32, Shape{floats}});
  std::vector<float> want(static_cast<size_t>(floats));
  rnn_prepack(c, which, g.value(n.inputs[which == RnnPacked::kW ? 1 : 2]).constant_as<float>(), want.data());
  CHECK(std::vector<float>(packed.constant_as<float>(), packed.constant_as<float>() + floats) == want);
}

}  // namespace

TEST_CASE("constant LSTM and GRU weights get packed forms that run to the same outputs", "[prepack][rnn]") {
  for (EdgeOp op : {EdgeOp::Lstm, EdgeOp::Gru}) {
    for (int64_t lbr = 0; lbr <= (op == EdgeOp::Gru ? 1 : 0); ++lbr) {
      INFO((op == EdgeOp::Lstm ? "lstm" : "gru") << " linear_before_reset " << lbr);
      Recurrent plain = recurrent(op, lbr, false);
      ir::ExportedProgram packed = plain.program;
      const passes::PrepackStats stats = passes::prepack_rnn_weights(packed.graph);
      REQUIRE(ir::verify(packed.graph).ok());
      const ir::Node& n = only_node(packed.graph, op);
      CHECK(stats.tensors == 2);
      const RnnConfig c = config_of(packed.graph, n);
      CHECK(stats.bytes == 4 * static_cast<size_t>(rnn_prepacked_floats(c, RnnPacked::kW) +
                                                   rnn_prepacked_floats(c, RnnPacked::kR)));
      // Absent optional inputs fill the slots before the packed ones.
      CHECK(n.inputs.size() == static_cast<size_t>(rnn_packed_input(op == EdgeOp::Lstm, RnnPacked::kR)) + 1);
      CHECK(n.inputs[3] == ir::kNoValue);
      check_packed(packed.graph, n, RnnPacked::kW);
      check_packed(packed.graph, n, RnnPacked::kR);
      // Run again: nothing more to pack.
      CHECK(passes::prepack_rnn_weights(packed.graph).tensors == 0);
      const auto want = testing::run_program(plain.program, plain.inputs);
      CHECK(testing::run_program(packed, plain.inputs) == want);
      // The runtime reads the packed form, not W, where it runs the packed
      // products: packed from other weights, the outputs follow those.
      ir::Value& packed_w = packed.graph.value(
          n.inputs[static_cast<size_t>(rnn_packed_input(op == EdgeOp::Lstm, RnnPacked::kW))]);
      std::mt19937 rng(99);
      const auto other = random_floats(static_cast<size_t>(c.num_dirs * c.gates * c.hidden * c.input), rng);
      auto bytes = std::make_shared<std::vector<uint8_t>>(packed_w.constant->size());
      rnn_prepack(c, RnnPacked::kW, other.data(), reinterpret_cast<float*>(bytes->data()));
      packed_w.constant = bytes;
      CHECK((testing::run_program(packed, plain.inputs) == want) == !packed_gemv_available());
    }
  }
}

TEST_CASE("weights computed at run time are not packed; the constant ones beside them are",
          "[prepack][rnn]") {
  Recurrent plain = recurrent(EdgeOp::Gru, 0, true);
  ir::ExportedProgram packed = plain.program;
  CHECK(passes::prepack_rnn_weights(packed.graph).tensors == 1);
  const ir::Node& n = only_node(packed.graph, EdgeOp::Gru);
  REQUIRE(n.inputs.size() == 8);
  CHECK(n.inputs[6] == ir::kNoValue);  // W is a graph input
  check_packed(packed.graph, n, RnnPacked::kR);
  CHECK(testing::run_program(packed, plain.inputs) == testing::run_program(plain.program, plain.inputs));
}

TEST_CASE("the pipeline packs recurrent weights unless told not to", "[prepack][rnn]") {
  Recurrent with = recurrent(EdgeOp::Lstm, 0, false);
  Recurrent without = recurrent(EdgeOp::Lstm, 0, false);
  const passes::PipelineStats packed = passes::run_pipeline(with.program);
  CHECK(packed.rnn_weights_prepacked == 2);
  CHECK(only_node(with.program.graph, EdgeOp::Lstm).inputs.size() == 10);
  passes::PipelineOptions off;
  off.prepack_rnn = false;
  const passes::PipelineStats plain = passes::run_pipeline(without.program, off);
  CHECK(plain.rnn_weights_prepacked == 0);
  CHECK(plain.rnn_prepacked_bytes == 0);
  CHECK(only_node(without.program.graph, EdgeOp::Lstm).inputs.size() == 3);
}
