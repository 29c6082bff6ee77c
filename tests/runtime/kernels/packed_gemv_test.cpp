// The packed recurrent product (packed_gemv.h) and the LSTM/GRU kernels that
// use it when R is a program constant: same results as the GEMM path.
#include "runtime/kernels/portable/packed_gemv.h"

#include <catch2/catch.hpp>
#include <cmath>

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
  const int64_t n = 200, k = 37;              // a full block and a tail of 72 columns
  const auto w = pseudo_random(static_cast<size_t>(n * k), 11);
  const PackedGemv g = PackedGemv::pack(w.data(), n, k, k);
  REQUIRE(g.packed());
  for (int64_t rows : {1, 2, 3, 4, 5, 7, 64}) {
    const int64_t ldx = k + 3, ldy = n + 9;  // strides wider than the rows
    const auto x = pseudo_random(static_cast<size_t>(rows * ldx), static_cast<uint32_t>(rows));
    std::vector<float> many(static_cast<size_t>(rows * ldy), 42.0f), one(static_cast<size_t>(n));
    g.run_rows(x.data(), ldx, rows, many.data(), ldy);
    INFO("rows " << rows);
    for (int64_t r = 0; r < rows; ++r) {
      g.run(x.data() + r * ldx, one.data());
      CHECK(std::vector<float>(many.begin() + r * ldy, many.begin() + r * ldy + n) == one);
      for (int64_t j = n; j < ldy && r * ldy + j < rows * ldy; ++j) CHECK(many[r * ldy + j] == 42.0f);
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
