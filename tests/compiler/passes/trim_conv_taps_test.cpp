// Differential: a convolution whose kernel taps read only padding for every
// output (atrous ASPP branches on a small map, a window larger than the map)
// loses those taps and as much padding, and keeps its outputs (to the last
// bits: a kernel may add the remaining terms in another order); a
// convolution every tap of which some output reads is left as written.
#include "compiler/passes/trim_conv_taps.h"

#include <catch2/catch.hpp>
#include <random>

#include "compiler/ir/node_attrs.h"
#include "compiler/ir/verifier.h"
#include "tests/support/differential.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

struct Case {
  const char* name;
  int64_t h, w, kernel, stride, dilation, pad;
  std::vector<int64_t> kept;  // the trimmed window, {} when not trimmed
  std::vector<int64_t> pads;  // the trimmed pads
};

}  // namespace

TEST_CASE("trim_conv_taps drops the taps that read only padding and keeps the outputs", "[passes][trim]") {
  const Case cases[] = {
      {"ASPP dilation 24 on 16x16: only the centre tap", 16, 16, 3, 1, 24, 24, {1, 1}, {0, 0, 0, 0}},
      {"dilation 12 on 16x16: every tap reaches", 16, 16, 3, 1, 12, 12, {}, {}},
      {"7x7 window on a 3x5 map", 3, 5, 7, 1, 1, 3, {5, 7}, {2, 3, 2, 3}},
      {"stride 2, dilation 6 on 5x5", 5, 5, 3, 2, 6, 6, {1, 1}, {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::mt19937 rng(3);
    GraphBuilder b;
    auto x = b.input("x", DType::Float32, {1, 4, c.h, c.w});
    auto w = b.constant_f32("w", {6, 4, c.kernel, c.kernel}, random_floats(6 * 4 * c.kernel * c.kernel, rng));
    auto bias = b.constant_f32("b", {6}, random_floats(6, rng));
    const ir::Attrs attrs{{"strides", std::vector<int64_t>{c.stride, c.stride}},
                          {"pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad}},
                          {"dilations", std::vector<int64_t>{c.dilation, c.dilation}},
                          {"group", int64_t{1}}};
    b.output(b.op(EdgeOp::Conv, {x, w, bias}, attrs), "y");
    const ir::ExportedProgram before = b.build();
    ir::ExportedProgram after = before;
    CHECK(passes::trim_conv_taps(after.graph) == (c.kept.empty() ? 0u : 1u));
    REQUIRE(ir::verify(after.graph).ok());
    for (const ir::Node& n : after.graph.nodes()) {
      if (n.op != EdgeOp::Conv) continue;
      const Shape& kw = after.graph.value(n.inputs[1]).spec.shape;
      if (c.kept.empty()) {
        CHECK(kw == Shape{6, 4, c.kernel, c.kernel});
      } else {
        CHECK(kw == Shape{6, 4, c.kept[0], c.kept[1]});
        CHECK(ir::attr_ints(n, "pads") == c.pads);
      }
    }
    testing::check_same_float_outputs(before, after,
                                      {testing::as_bytes(random_floats(4 * c.h * c.w, rng, -2, 2))}, 1e-6);
  }
}
