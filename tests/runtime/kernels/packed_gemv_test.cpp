// The packed recurrent product (packed_gemv.h) and the LSTM/GRU kernels that
// use it when R is a program constant: same results as the GEMM path, and
// W and R packed ahead of time read in place.
#include "runtime/kernels/portable/packed_gemv.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/core/task_pool.h"
#include "runtime/kernels/portable/rnn_common.h"
#include "tests/runtime/kernels/resize_kernel_test_util.h"

using etc::EdgeOp;
using etc::PackedGemv;
using etc::Shape;
using etc::test::OwnedTensor;
using etc::test::pseudo_random;
using etc::test::run_kernel;

namespace {

// The largest |a - b| relative to the largest |b|.
float relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float gap = 0, scale = 1e-30f;
  for (size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return gap / scale;
}

}  // namespace

TEST_CASE("packed products equal a double-precision x·Wᵀ over block and tail widths", "[packed_gemv]") {
  for (int64_t n : {1, 15, 16, 17, 80, 127, 128, 129, 300, 512}) {
    for (int64_t k : {1, 3, 64, 130}) {
      const int64_t ldw = k + 5;  // a row stride wider than the row
      const auto w = pseudo_random(static_cast<size_t>(n * ldw), static_cast<uint32_t>(n * 7 + k));
      const auto x = pseudo_random(static_cast<size_t>(k), static_cast<uint32_t>(k));
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t i = 0; i < k; ++i) s += double(x[i]) * w[j * ldw + i];
        want[j] = static_cast<float>(s);
      }
      INFO("n " << n << " k " << k);
      const PackedGemv g = PackedGemv::pack_always(w.data(), n, k, ldw);
      REQUIRE(g.packed());
      CHECK(g.rows() == n);
      CHECK(g.cols() == k);
      std::vector<float> y(static_cast<size_t>(n) + 16, 42.0f);  // 16 guard values past the end
      g.run_portable(x.data(), y.data());
      CHECK(relative_gap({y.begin(), y.begin() + n}, want) < 1e-5f);
      CHECK(y[n] == 42.0f);
      if (etc::packed_gemv_available()) {
        std::fill(y.begin(), y.end(), 42.0f);
        g.run(x.data(), y.data());
        CHECK(relative_gap({y.begin(), y.begin() + n}, want) < 1e-5f);
        for (int64_t j = n; j < n + 16; ++j) CHECK(y[j] == 42.0f);  // masked tail stores
      }
      CHECK(PackedGemv::pack(w.data(), n, k, ldw).packed() == etc::packed_gemv_available());
    }
  }
}

TEST_CASE("packed products over many rows equal one row at a time", "[packed_gemv]") {
  if (!etc::packed_gemv_available()) return;  // run_rows is run() row by row elsewhere
  // Widths whose blocks run as strips of every width: 200, a full block (two
  // strips of 64 columns) and a tail of 72 (64, then 8 of a masked vector);
  // 17, one strip of two vectors; 100 and 1000, a last block of a strip of
  // 64 and one of three vectors (36 and 40 columns of it valid).
  const int64_t k = 37;
  for (int64_t n : {200, 17, 100, 1000}) {
    const auto w = pseudo_random(static_cast<size_t>(n * k), 11);
    const PackedGemv g = PackedGemv::pack(w.data(), n, k, k);
    REQUIRE(g.packed());
    for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 11, 13, 64}) {  // tiles of 6 rows, whole and not
      const int64_t ldx = k + 3, ldy = n + 9;                 // strides wider than the rows
      const auto x = pseudo_random(static_cast<size_t>(rows * ldx), static_cast<uint32_t>(rows));
      std::vector<float> many(static_cast<size_t>(rows * ldy), 42.0f), one(static_cast<size_t>(n));
      g.run_rows(x.data(), ldx, rows, many.data(), ldy);
      INFO("n " << n << ", rows " << rows);
      for (int64_t r = 0; r < rows; ++r) {
        g.run(x.data() + r * ldx, one.data());
        CHECK(std::vector<float>(many.begin() + r * ldy, many.begin() + r * ldy + n) == one);
        for (int64_t j = n; j < ldy && r * ldy + j < rows * ldy; ++j) CHECK(many[r * ldy + j] == 42.0f);
      }
    }
  }
}

TEST_CASE("lstm and gru give the GEMM path's results with W and R packed at init", "[packed_gemv][rnn]") {
  // Hidden 40: 4·40 = 160 rows of R (a full block and a tail); batch 2 with
  // a shorter second sequence; both directions; initial states.
  const int seq = 5, batch = 2, in = 7, hs = 40;
  for (EdgeOp op : {EdgeOp::Lstm, EdgeOp::Gru}) {
    const int gates = op == EdgeOp::Lstm ? 4 : 3;
    for (int lbr = 0; lbr <= (op == EdgeOp::Gru ? 1 : 0); ++lbr) {
      etc::ir::Attrs attrs{{"hidden_size", int64_t{hs}}, {"direction", std::string("bidirectional")}};
      if (op == EdgeOp::Gru) attrs.set("linear_before_reset", int64_t{lbr});
      std::vector<OwnedTensor> inputs{
          OwnedTensor::of<float>(Shape{seq, batch, in}, pseudo_random(seq * batch * in, 1)),
          OwnedTensor::of<float>(Shape{2, gates * hs, in}, pseudo_random(2 * gates * hs * in, 2)),
          OwnedTensor::of<float>(Shape{2, gates * hs, hs}, pseudo_random(2 * gates * hs * hs, 3)),
          OwnedTensor::of<float>(Shape{2, 2 * gates * hs}, pseudo_random(2 * 2 * gates * hs, 4)),
          OwnedTensor::of<int32_t>(Shape{batch}, {5, 3}),
          OwnedTensor::of<float>(Shape{2, batch, hs}, pseudo_random(2 * batch * hs, 5))};
      const int outputs = op == EdgeOp::Lstm ? 3 : 2;
      if (op == EdgeOp::Lstm)
        inputs.push_back(OwnedTensor::of<float>(Shape{2, batch, hs}, pseudo_random(2 * batch * hs, 6)));
      const auto gemm = run_kernel(op, attrs, inputs, outputs, false);
      const auto packed = run_kernel(op, attrs, inputs, outputs, true);
      INFO("op " << (op == EdgeOp::Lstm ? "lstm" : "gru") << " linear_before_reset " << lbr);
      for (int i = 0; i < outputs; ++i)
        CHECK(relative_gap(packed[i].values<float>(), gemm[i].values<float>()) < 1e-5f);
    }
  }
}

TEST_CASE("a packed form written by pack_into is read in place by a view", "[packed_gemv]") {
  for (int64_t n : {1, 17, 128, 200}) {
    for (int64_t k : {1, 37}) {
      const int64_t ldw = k + 2;
      const auto w = pseudo_random(static_cast<size_t>(n * ldw), static_cast<uint32_t>(n + k));
      const auto x = pseudo_random(static_cast<size_t>(k), 3);
      const int64_t floats = PackedGemv::packed_floats(n, k);
      CHECK(floats == (n + 15) / 16 * 16 * k);
      etc::AlignedBuffer buf = etc::AlignedBuffer::allocate(static_cast<size_t>(floats + 1) * sizeof(float));
      REQUIRE(buf);
      PackedGemv::pack_into(w.data(), n, k, ldw, buf.as<float>());
      const PackedGemv view = PackedGemv::view(buf.as<const float>(), n, k);
      REQUIRE(view.packed());
      CHECK(view.rows() == n);
      CHECK(view.cols() == k);
      const PackedGemv owned = PackedGemv::pack_always(w.data(), n, k, ldw);
      std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      view.run_portable(x.data(), a.data());
      owned.run_portable(x.data(), b.data());
      INFO("n " << n << " k " << k);
      CHECK(a == b);
      if (etc::packed_gemv_available()) {
        view.run(x.data(), a.data());
        owned.run(x.data(), b.data());
        CHECK(a == b);
      }
      // The kernel's loads are aligned: a view elsewhere is refused.
      CHECK_FALSE(PackedGemv::view(buf.as<const float>() + 1, n, k).packed());
    }
  }
  CHECK_FALSE(PackedGemv::view(nullptr, 4, 4).packed());
  CHECK(PackedGemv::packed_floats(0, 4) == 0);
}

namespace {

// An LSTM or GRU's inputs (bidirectional, batch 2, a shorter second
// sequence, initial states) with W and R from `seed`, and hidden 40 (160
// rows of R: a full block and a tail), padded with absent inputs up to the
// packed ones.
struct RnnCase {
  EdgeOp op;
  etc::ir::Attrs attrs;
  std::vector<OwnedTensor> inputs;
  int outputs;
};

RnnCase rnn_case(EdgeOp op, int lbr, uint32_t seed) {
  const int seq = 5, batch = 2, in = 7, hs = 40;
  const int gates = op == EdgeOp::Lstm ? 4 : 3;
  RnnCase c{op, {{"hidden_size", int64_t{hs}}, {"direction", std::string("bidirectional")}}, {}, 0};
  if (op == EdgeOp::Gru) c.attrs.set("linear_before_reset", int64_t{lbr});
  c.inputs = {OwnedTensor::of<float>(Shape{seq, batch, in}, pseudo_random(seq * batch * in, 1)),
              OwnedTensor::of<float>(Shape{2, gates * hs, in}, pseudo_random(2 * gates * hs * in, seed)),
              OwnedTensor::of<float>(Shape{2, gates * hs, hs}, pseudo_random(2 * gates * hs * hs, seed + 1)),
              OwnedTensor::of<float>(Shape{2, 2 * gates * hs}, pseudo_random(2 * 2 * gates * hs, 4)),
              OwnedTensor::of<int32_t>(Shape{batch}, {5, 3}),
              OwnedTensor::of<float>(Shape{2, batch, hs}, pseudo_random(2 * batch * hs, 5))};
  if (op == EdgeOp::Lstm) {
    c.inputs.push_back(OwnedTensor::of<float>(Shape{2, batch, hs}, pseudo_random(2 * batch * hs, 6)));
    c.inputs.push_back(OwnedTensor{});  // no peepholes
  }
  c.outputs = op == EdgeOp::Lstm ? 3 : 2;
  return c;
}

// W's and R's packed forms, as the compiler writes them.
std::vector<OwnedTensor> packed_forms(const RnnCase& c) {
  std::vector<etc::TensorSpec> specs;
  for (const auto& t : c.inputs) specs.push_back(t.spec);
  const std::vector<etc::AttrView> views = c.attrs.views();
  const auto config = etc::parse_rnn_config(etc::AttrList(views), specs, c.op == EdgeOp::Lstm);
  REQUIRE(config.ok());
  std::vector<OwnedTensor> out;
  for (auto which : {etc::RnnPacked::kW, etc::RnnPacked::kR}) {
    const int64_t floats = etc::rnn_prepacked_floats(config.get(), which);
    std::vector<float> packed(static_cast<size_t>(floats));
    const auto plain = c.inputs[which == etc::RnnPacked::kW ? 1 : 2].values<float>();
    etc::rnn_prepack(config.get(), which, plain.data(), packed.data());
    out.push_back(OwnedTensor::of<float>(Shape{floats}, packed));
  }
  return out;
}

}  // namespace

TEST_CASE("lstm and gru read W and R packed ahead of time in place where they run the packed products",
          "[packed_gemv][rnn]") {
  for (EdgeOp op : {EdgeOp::Lstm, EdgeOp::Gru}) {
    for (int lbr = 0; lbr <= (op == EdgeOp::Gru ? 1 : 0); ++lbr) {
      INFO("op " << (op == EdgeOp::Lstm ? "lstm" : "gru") << " linear_before_reset " << lbr);
      const RnnCase c = rnn_case(op, lbr, 2), other = rnn_case(op, lbr, 12);
      const auto plain = run_kernel(op, c.attrs, c.inputs, c.outputs, true);
      const auto plain_other = run_kernel(op, other.attrs, other.inputs, other.outputs, true);

      // Packed from the same W and R: the same products on the same layout.
      RnnCase with = c;
      for (auto& t : packed_forms(c)) with.inputs.push_back(t);
      const auto same = run_kernel(op, with.attrs, with.inputs, with.outputs, true);
      for (int i = 0; i < c.outputs; ++i) CHECK(same[i].bytes == plain[i].bytes);

      // Packed from other weights: where the packed products run, the
      // kernel multiplies by those (it reads the packed inputs, not W and R);
      // elsewhere it ignores them. Misaligned, they are ignored everywhere
      // (W and R are packed at init instead).
      RnnCase mixed = c;
      for (auto& t : packed_forms(other)) mixed.inputs.push_back(t);
      const auto read = run_kernel(op, mixed.attrs, mixed.inputs, mixed.outputs, true);
      const auto& want = etc::packed_gemv_available() ? plain_other : plain;
      for (int i = 0; i < c.outputs; ++i) CHECK(read[i].bytes == want[i].bytes);
      const auto misaligned = run_kernel(op, mixed.attrs, mixed.inputs, mixed.outputs, true, 4);
      for (int i = 0; i < c.outputs; ++i) CHECK(misaligned[i].bytes == plain[i].bytes);
      // Not constants (inputs fed at run time): ignored too.
      const auto fed = run_kernel(op, mixed.attrs, mixed.inputs, mixed.outputs, false);
      const auto fed_plain = run_kernel(op, c.attrs, c.inputs, c.outputs, false);
      for (int i = 0; i < c.outputs; ++i) CHECK(fed[i].bytes == fed_plain[i].bytes);
    }
  }
}

TEST_CASE("packed weights of the wrong size or for a float64 cell are refused", "[packed_gemv][rnn]") {
  const etc::OpDef* def = etc::find_op_def(EdgeOp::Lstm);
  REQUIRE(def != nullptr);
  RnnCase c = rnn_case(EdgeOp::Lstm, 0, 2);
  auto packed = packed_forms(c);
  std::vector<etc::TensorSpec> specs;
  for (const auto& t : c.inputs) specs.push_back(t.spec);
  const std::vector<etc::AttrView> views = c.attrs.views();
  std::vector<etc::TensorSpec> outs(3);
  specs.push_back(packed[0].spec);
  specs.push_back(etc::TensorSpec{etc::DType::Float32, Shape{packed[1].spec.shape[0] - 16}});
  etc::Status s = etc::infer_outputs(*def, etc::AttrList(views), specs, outs);
  CHECK(s.error() == etc::Error::InvalidShape);
  CHECK_THAT(s.message(), Catch::Contains("R packed ahead of time has shape"));
  specs.back() = packed[1].spec;
  CHECK(etc::infer_outputs(*def, etc::AttrList(views), specs, outs).ok());
  specs.push_back(packed[1].spec);  // one input too many
  CHECK_FALSE(etc::infer_outputs(*def, etc::AttrList(views), specs, outs).ok());

  // A float64 cell takes no packed forms.
  std::vector<etc::TensorSpec> f64;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    etc::TensorSpec t = c.inputs[i].spec;
    if (t.dtype == etc::DType::Float32) t.dtype = etc::DType::Float64;
    f64.push_back(t);
  }
  CHECK(etc::infer_outputs(*def, etc::AttrList(views), f64, outs).ok());
  f64.push_back(packed[0].spec);
  s = etc::infer_outputs(*def, etc::AttrList(views), f64, outs);
  CHECK(s.error() == etc::Error::InvalidType);
  CHECK_THAT(s.message(), Catch::Contains("only float32 cells take it"));
}

TEST_CASE(
    "packed products split over a pool's threads, either way through the blocks, give the one-thread bytes",
    "[packed_gemv][threads]") {
  // 1000 columns (8 blocks, the last of 104) x 300: above kThreadedWork
  // for one row already.
  const int64_t n = 1000, k = 300;
  REQUIRE(n * k >= PackedGemv::kThreadedWork);
  const auto w = pseudo_random(static_cast<size_t>(n * k), 21);
  const PackedGemv g = PackedGemv::pack_always(w.data(), n, k, k);
  REQUIRE(g.packed());
  auto pool = etc::TaskPool::create(3);
  REQUIRE(pool != nullptr);
  for (int64_t rows : {1, 4, 7}) {
    INFO("rows " << rows);
    const int64_t ldy = n + 3;
    const auto x = pseudo_random(static_cast<size_t>(rows * k), static_cast<uint32_t>(rows));
    std::vector<float> one(static_cast<size_t>(rows * ldy), 42.0f), split(one);
    if (etc::packed_gemv_available())
      g.run_rows(x.data(), k, rows, one.data(), ldy);
    else
      for (int64_t r = 0; r < rows; ++r) g.run_portable(x.data() + r * k, one.data() + r * ldy);
    // Several times: the workers join some loops and not others; blocks
    // first to last and last to first (each thread its own range mirrored).
    for (int rep = 0; rep < 20; ++rep) {
      std::fill(split.begin(), split.end(), 42.0f);
      g.run_rows_on(pool.get(), x.data(), k, rows, split.data(), ldy, rep % 2 == 1);
      REQUIRE(split == one);
    }
    // The same without a pool, both ways.
    for (bool backward : {false, true}) {
      std::fill(split.begin(), split.end(), 42.0f);
      g.run_rows_on(nullptr, x.data(), k, rows, split.data(), ldy, backward);
      CHECK(split == one);
    }
  }
}

TEST_CASE("lstm and gru ask for threads when a product is large enough", "[packed_gemv][rnn][threads]") {
  for (EdgeOp op : {EdgeOp::Lstm, EdgeOp::Gru}) {
    for (int64_t hidden : {40, 300}) {
      const int64_t in = 16, gates = op == EdgeOp::Lstm ? 4 : 3;
      etc::ir::Attrs attrs{{"hidden_size", hidden}};
      std::vector<etc::TensorSpec> specs{{etc::DType::Float32, Shape{3, 1, in}},
                                         {etc::DType::Float32, Shape{1, gates * hidden, in}},
                                         {etc::DType::Float32, Shape{1, gates * hidden, hidden}}};
      const std::vector<etc::AttrView> views = attrs.views();
      std::vector<etc::TensorSpec> outs(1);
      const etc::OpDef* def = etc::find_op_def(op);
      REQUIRE(etc::infer_outputs(*def, etc::AttrList(views), specs, outs).ok());
      auto kernel = def->create(etc::AttrList(views), specs, outs);
      REQUIRE(kernel.ok());
      INFO("gates " << gates << " hidden " << hidden);
      // A step through R of 3 or 4 x 300 x 300 floats reaches kThreadedWork
      // (2^17 multiply-adds); with hidden 40 neither it nor the projection
      // of 3 steps does. Packed or not (the GEMM path splits as well).
      CHECK(kernel.get()->wants_threads() == (hidden == 300));
    }
  }
}

TEST_CASE("lstm and gru without packed forms run to the same bytes on a pool, both ways through R",
          "[packed_gemv][rnn][threads]") {
  // Hidden 300: each direction's R (3 or 4 x 300 rows of 300) is worth
  // splitting. The GEMM path: the weights are not given as constants.
  auto pool = etc::TaskPool::create(3);
  REQUIRE(pool != nullptr);
  const int seq = 4, batch = 1, in = 8, hs = 300;
  for (EdgeOp op : {EdgeOp::Lstm, EdgeOp::Gru}) {
    const int gates = op == EdgeOp::Lstm ? 4 : 3;
    etc::ir::Attrs attrs{{"hidden_size", int64_t{hs}}, {"direction", std::string("bidirectional")}};
    std::vector<OwnedTensor> inputs{
        OwnedTensor::of<float>(Shape{seq, batch, in}, pseudo_random(seq * batch * in, 1)),
        OwnedTensor::of<float>(Shape{2, gates * hs, in}, pseudo_random(2 * gates * hs * in, 2)),
        OwnedTensor::of<float>(Shape{2, gates * hs, hs}, pseudo_random(2 * gates * hs * hs, 3))};
    const auto one = run_kernel(op, attrs, inputs, 1, false);
    const auto pooled = run_kernel(op, attrs, inputs, 1, false, 0, pool.get());
    INFO("op " << (op == EdgeOp::Lstm ? "lstm" : "gru"));
    CHECK(pooled[0].bytes == one[0].bytes);
    // And packed, on the pool, within rounding of the GEMM path.
    const auto packed = run_kernel(op, attrs, inputs, 1, true, 0, pool.get());
    CHECK(relative_gap(packed[0].values<float>(), one[0].values<float>()) < 1e-4f);
  }
}
