// Batched matrix products on the native micro-kernel (native_matmul.h):
// attention's shapes (B transposed, a partial last panel and tile, whole
// panel pairs), a B shared by every batch, a product written with a row
// stride wider than its columns, each against a double-precision reference
// of the blob's documented strides, under AVX-512 and AVX2, at 1 and 2
// threads, and under native_convolution=off (the portable GEMM). Which
// products the kernel takes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_math.h"
#include "runtime/backends/xnnpack/native_matmul.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;

// One product: operands of the given dims, addressed through `strides`
// (A, B, C: one per batch dim, then row and column), as the blob has it.
struct Product {
  std::vector<uint64_t> batch;
  uint64_t m = 0, n = 0, k = 0;
  std::vector<uint64_t> strides;
  std::vector<uint64_t> a_dims, b_dims, c_dims;
};

uint64_t numel_of(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

std::vector<uint8_t> product_blob(const Product& p) {
  XnnpackBlobBuilder b;
  const uint32_t a = b.input(p.a_dims, 0), bb = b.input(p.b_dims, 1), c = b.output(p.c_dims, 0);
  auto& node = b.node(NodeType::BatchMatMul, {a, bb}, {c});
  node.batch = p.batch;
  node.mnk = {p.m, p.n, p.k};
  node.strides = p.strides;
  return b.build();
}

std::vector<float> reference(const Product& p, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(numel_of(p.c_dims), 0.0f);
  const size_t per = p.batch.size() + 2;
  const uint64_t batches = numel_of(p.batch);
  for (uint64_t i = 0; i < batches; ++i) {
    uint64_t off[3] = {0, 0, 0}, rest = i;
    for (size_t d = p.batch.size(); d-- > 0;) {
      const uint64_t idx = rest % p.batch[d];
      rest /= p.batch[d];
      for (size_t o = 0; o < 3; ++o) off[o] += idx * p.strides[o * per + d];
    }
    const auto at = [&](size_t o, uint64_t r, uint64_t col) {
      return off[o] + r * p.strides[o * per + p.batch.size()] + col * p.strides[o * per + p.batch.size() + 1];
    };
    for (uint64_t r = 0; r < p.m; ++r)
      for (uint64_t col = 0; col < p.n; ++col) {
        double sum = 0;
        for (uint64_t k = 0; k < p.k; ++k) sum += double(a[at(0, r, k)]) * double(b[at(1, k, col)]);
        c[at(2, r, col)] = static_cast<float>(sum);
      }
  }
  return c;
}

std::vector<float> run_product(const Product& p, const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<Spec>& specs, int threads) {
  SpecRunner runner(threads);
  const Status s = runner.init(product_blob(p), specs);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<float> x = a, y = b, c(numel_of(p.c_dims), -12345.0f);
  const auto shape = [](const std::vector<uint64_t>& dims) {
    Shape out;
    for (uint64_t d : dims) out.push_back(static_cast<int64_t>(d));
    return out;
  };
  const Status e =
      runner.execute({{shape(p.a_dims), x.data()}, {shape(p.b_dims), y.data()}, {shape(p.c_dims), c.data()}});
  INFO(e.message());
  REQUIRE(e.ok());
  return c;
}

// The product as the runtime compiles it.
xnnpack::BatchMatMulOp compiled(const Product& p) {
  const std::vector<uint8_t> blob = product_blob(p);
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  INFO((view.ok() ? std::string() : view.message()));
  REQUIRE(view.ok());
  return xnnpack::compile_batch_matmul(view.get(), *view.get().graph->nodes()->Get(0));
}

const std::vector<Product>& products() {
  static const std::vector<Product> all = {
      // Q K^T of 2 heads: A [2, 30, 8], B = K [2, 37, 8] read transposed;
      // a partial panel (37 = 32 + 5) and a partial tile (30 = 12 + 12 + 6).
      {.batch = {2},
       .m = 30,
       .n = 37,
       .k = 8,
       .strides = {240, 8, 1, 296, 1, 8, 1110, 37, 1},
       .a_dims = {2, 30, 8},
       .b_dims = {2, 37, 8},
       .c_dims = {2, 30, 37}},
      // Attention times V, 3 heads: two whole panels as a pair and 6
      // columns more (70), a reduction of 41.
      {.batch = {3},
       .m = 25,
       .n = 70,
       .k = 41,
       .strides = {1025, 41, 1, 2870, 70, 1, 1750, 70, 1},
       .a_dims = {3, 25, 41},
       .b_dims = {3, 41, 70},
       .c_dims = {3, 25, 70}},
      // One B for both batches (stride 0), the product written [m, batch, n].
      {.batch = {2},
       .m = 13,
       .n = 64,
       .k = 16,
       .strides = {208, 16, 1, 0, 64, 1, 64, 128, 1},
       .a_dims = {2, 13, 16},
       .b_dims = {16, 64},
       .c_dims = {13, 2, 64}},
      // Fewer rows than a tile: the portable GEMM.
      {.batch = {},
       .m = 5,
       .n = 40,
       .k = 9,
       .strides = {9, 1, 40, 1, 40, 1},
       .a_dims = {5, 9},
       .b_dims = {9, 40},
       .c_dims = {5, 40}},
      // A read transposed: the portable GEMM.
      {.batch = {},
       .m = 20,
       .n = 33,
       .k = 7,
       .strides = {1, 20, 33, 1, 33, 1},
       .a_dims = {7, 20},
       .b_dims = {7, 33},
       .c_dims = {20, 33}}};
  return all;
}

TEST_CASE("xnnpack batched matrix products on the native kernel equal the reference", "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const xnnpack::NativeIsa isa = GENERATE(from_range(native_isas()));
  INFO(isa_name(isa));
  const NativeIsaCap cap(isa);
  for (size_t i = 0; i < products().size(); ++i) {
    INFO("product " << i);
    const Product& p = products()[i];
    std::mt19937 rng(static_cast<uint32_t>(700 + i));
    const std::vector<float> a = testing::random_floats(numel_of(p.a_dims), rng);
    const std::vector<float> b = testing::random_floats(numel_of(p.b_dims), rng);
    const std::vector<float> want = reference(p, a, b);
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      CHECK(count_far(run_product(p, a, b, {}, threads), want, 1e-5) == 0);
      CHECK(count_far(run_product(p, a, b, kOff, threads), want, 1e-5) == 0);
    }
  }
}

TEST_CASE("xnnpack takes batched matrix products with contiguous A rows and a whole tile onto the kernel",
          "[xnnpack]") {
  REQUIRE(xnnpack::native_convolution_available());
  const std::vector<bool> takes = {true, true, true, false, false};
  for (size_t i = 0; i < products().size(); ++i) {
    INFO("product " << i);
    const xnnpack::BatchMatMulOp op = compiled(products()[i]);
    CHECK(xnnpack::matmul_runs_on_kernel(op) == takes[i]);
    CHECK((xnnpack::matmul_scratch_floats(op) > 0) == takes[i]);
  }
}

}  // namespace
}  // namespace etc
