// Portable gather_elements, gather_nd, scatter_elements and scatter_nd beyond
// the conformance suite: negative and int32 indices, every reduction, index
// order for repeated indices, bool data moved as bytes, batch_dims, empty
// indices, and out-of-range indices refused before anything is written.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/runtime/kernels/reduce_kernel_test_util.h"

using etc::DType;
using etc::EdgeOp;
using etc::Shape;
using etc::TensorSpec;
using etc::testing::host;
using etc::testing::HostTensor;
using etc::testing::infer_error;
using etc::testing::run_kernel;
using etc::testing::try_run_kernel;

namespace {

std::string run_error(EdgeOp op, const etc::ir::Attrs& attrs, const std::vector<HostTensor>& inputs,
                      std::vector<HostTensor>& outs) {
  const etc::Status s = try_run_kernel(op, attrs, inputs, 1, outs);
  return s.ok() ? "" : s.message();
}

}  // namespace

TEST_CASE("gather_elements reads along the axis, indices smaller than the data off it", "[index]") {
  // data [3, 3]; indices [2, 2] on axis 0 and axis 1, int32 and negative.
  const auto data = host<float>(Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const auto rows = host<int32_t>(Shape{2, 2}, {2, -3, 1, -1});
  REQUIRE(run_kernel(EdgeOp::GatherElements, {{"axis", int64_t{0}}}, {data, rows}, 1)[0].values<float>() ==
          std::vector<float>{7, 2, 4, 8});
  const auto cols = host<int64_t>(Shape{2, 2}, {2, 0, -2, 1});
  const auto out = run_kernel(EdgeOp::GatherElements, {{"axis", int64_t{1}}}, {data, cols}, 1)[0];
  REQUIRE(out.spec.shape == Shape{2, 2});
  REQUIRE(out.values<float>() == std::vector<float>{3, 1, 5, 5});
}

TEST_CASE("gather_elements on rank 3 with the axis in the middle", "[index]") {
  std::vector<int64_t> values(2 * 3 * 2);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  const auto data = host<int64_t>(Shape{2, 3, 2}, values);
  const auto idx = host<int64_t>(Shape{2, 1, 2}, {2, 0, 1, -1});
  // out[b][0][c] = data[b][idx][c]
  REQUIRE(run_kernel(EdgeOp::GatherElements, {{"axis", int64_t{1}}}, {data, idx}, 1)[0].values<int64_t>() ==
          std::vector<int64_t>{4, 1, 8, 11});
}

TEST_CASE("scatter_elements applies every reduction in index order", "[index]") {
  const auto data = host<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const auto idx = host<int64_t>(Shape{2, 2}, {0, 0, 2, -1});
  const auto upd = host<float>(Shape{2, 2}, {10, 20, 30, 40});
  auto run = [&](const char* reduction) {
    return run_kernel(EdgeOp::ScatterElements, {{"axis", int64_t{1}}, {"reduction", std::string(reduction)}},
                      {data, idx, upd}, 1)[0]
        .values<float>();
  };
  // Row 0 writes column 0 twice; row 1 writes column 2 twice.
  REQUIRE(run("none") == std::vector<float>{20, 2, 3, 4, 5, 40});
  REQUIRE(run("add") == std::vector<float>{31, 2, 3, 4, 5, 76});
  REQUIRE(run("mul") == std::vector<float>{200, 2, 3, 4, 5, 7200});
  REQUIRE(run("max") == std::vector<float>{20, 2, 3, 4, 5, 40});
  REQUIRE(run("min") == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("scatter_elements moves bool data as bytes along axis 0", "[index]") {
  auto as_bool = [](HostTensor t) {
    t.spec.dtype = DType::Bool;
    return t;
  };
  const auto data = as_bool(host<uint8_t>(Shape{3, 2}, {0, 0, 0, 0, 0, 0}));
  const auto idx = host<int32_t>(Shape{1, 2}, {2, 1});
  const auto upd = as_bool(host<uint8_t>(Shape{1, 2}, {1, 1}));
  const auto out = run_kernel(EdgeOp::ScatterElements, {{"axis", int64_t{0}}}, {data, idx, upd}, 1)[0];
  REQUIRE(out.spec.dtype == DType::Bool);
  REQUIRE(out.values<uint8_t>() == std::vector<uint8_t>{0, 0, 0, 1, 1, 0});
}

TEST_CASE("gather_nd picks slices, with and without batch dims", "[index]") {
  const auto data = host<int32_t>(Shape{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // k = 1: whole [2] rows... of the first dim: slices of 4.
  const auto one = host<int64_t>(Shape{2, 1}, {1, -2});
  const auto a = run_kernel(EdgeOp::GatherNd, {}, {data, one}, 1)[0];
  REQUIRE(a.spec.shape == Shape{2, 2, 2});
  REQUIRE(a.values<int32_t>() == std::vector<int32_t>{4, 5, 6, 7, 0, 1, 2, 3});
  // k = 3: single elements.
  const auto three = host<int32_t>(Shape{2, 3}, {1, 0, 1, 0, 1, -1});
  const auto b = run_kernel(EdgeOp::GatherNd, {}, {data, three}, 1)[0];
  REQUIRE(b.spec.shape == Shape{2});
  REQUIRE(b.values<int32_t>() == std::vector<int32_t>{5, 3});
  // batch_dims 1: tuple j of batch i indexes data[i].
  const auto batched = host<int64_t>(Shape{2, 1, 1}, {1, 0});
  const auto c = run_kernel(EdgeOp::GatherNd, {{"batch_dims", int64_t{1}}}, {data, batched}, 1)[0];
  REQUIRE(c.spec.shape == Shape{2, 1, 2});
  REQUIRE(c.values<int32_t>() == std::vector<int32_t>{2, 3, 4, 5});
}

TEST_CASE("scatter_nd writes slices in index order and reduces", "[index]") {
  const auto data = host<double>(Shape{3, 2}, {1, 1, 1, 1, 1, 1});
  const auto idx = host<int64_t>(Shape{3, 1}, {2, 0, -1});
  const auto upd = host<double>(Shape{3, 2}, {2, 3, 4, 5, 6, 7});
  auto run = [&](const char* reduction) {
    return run_kernel(EdgeOp::ScatterNd, {{"reduction", std::string(reduction)}}, {data, idx, upd}, 1)[0]
        .values<double>();
  };
  REQUIRE(run("none") == std::vector<double>{4, 5, 1, 1, 6, 7});
  REQUIRE(run("add") == std::vector<double>{5, 6, 1, 1, 9, 11});
  REQUIRE(run("mul") == std::vector<double>{4, 5, 1, 1, 12, 21});
  REQUIRE(run("min") == std::vector<double>{1, 1, 1, 1, 1, 1});
  // Full tuples: single elements.
  const auto elems = host<int32_t>(Shape{2, 2}, {0, 1, 2, 0});
  const auto vals = host<double>(Shape{2}, {8, 9});
  REQUIRE(run_kernel(EdgeOp::ScatterNd, {}, {data, elems, vals}, 1)[0].values<double>() ==
          std::vector<double>{1, 8, 1, 1, 9, 1});
}

TEST_CASE("empty indices gather nothing and scatter nothing", "[index]") {
  const auto data = host<float>(Shape{2, 2}, {1, 2, 3, 4});
  const auto idx = host<int64_t>(Shape{0, 2}, {});
  REQUIRE(run_kernel(EdgeOp::GatherElements, {{"axis", int64_t{0}}}, {data, idx}, 1)[0].spec.shape ==
          Shape{0, 2});
  const auto upd = host<float>(Shape{0, 2}, {});
  REQUIRE(
      run_kernel(EdgeOp::ScatterElements, {{"axis", int64_t{0}}}, {data, idx, upd}, 1)[0].values<float>() ==
      std::vector<float>{1, 2, 3, 4});
  const auto tuples = host<int64_t>(Shape{0, 1}, {});
  REQUIRE(run_kernel(EdgeOp::ScatterNd, {}, {data, tuples, upd}, 1)[0].values<float>() ==
          std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("an out-of-range index fails the run before anything is written", "[index]") {
  const auto data = host<float>(Shape{2, 2}, {1, 2, 3, 4});
  std::vector<HostTensor> outs;
  // The first index is good, the second is not: the output keeps its fill.
  const auto idx = host<int64_t>(Shape{1, 2}, {1, 2});
  const auto upd = host<float>(Shape{1, 2}, {9, 9});
  const std::string e = run_error(EdgeOp::ScatterElements, {{"axis", int64_t{0}}}, {data, idx, upd}, outs);
  REQUIRE(e.find("scatter_elements: index 2 is out of range for a dim of 2") != std::string::npos);
  for (uint8_t b : outs[0].bytes) REQUIRE(b == 0xAB);
  REQUIRE(run_error(EdgeOp::GatherElements, {{"axis", int64_t{1}}}, {data, host<int32_t>(Shape{1, 1}, {-3})},
                    outs)
              .find("gather_elements: index -3") != std::string::npos);
  const std::string nd =
      run_error(EdgeOp::GatherNd, {}, {data, host<int64_t>(Shape{2, 2}, {0, 1, 1, 5})}, outs);
  REQUIRE(nd.find("index 5 (entry 1 of index tuple 1)") != std::string::npos);
  const std::string snd =
      run_error(EdgeOp::ScatterNd, {},
                {data, host<int64_t>(Shape{1, 1}, {-3}), host<float>(Shape{1, 2}, {0, 0})}, outs);
  REQUIRE(snd.find("scatter_nd: index -3") != std::string::npos);
}

TEST_CASE("infer refuses shapes and dtypes the ops cannot take", "[index]") {
  const TensorSpec data{DType::Float32, Shape{2, 3}};
  const TensorSpec idx{DType::Int64, Shape{2, 2}};
  REQUIRE(infer_error(EdgeOp::GatherElements, {{"axis", int64_t{0}}},
                      {data, TensorSpec{DType::Float32, Shape{2, 2}}}, 1)
              .find("indices must be int32 or int64") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::GatherElements, {{"axis", int64_t{0}}},
                      {data, TensorSpec{DType::Int64, Shape{2}}}, 1)
              .find("same rank") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::GatherElements, {{"axis", int64_t{0}}},
                      {data, TensorSpec{DType::Int64, Shape{1, 4}}}, 1)
              .find("larger than data") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::ScatterElements, {{"axis", int64_t{0}}},
                      {data, idx, TensorSpec{DType::Float32, Shape{2, 3}}}, 1)
              .find("updates") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::ScatterElements, {{"axis", int64_t{0}}, {"reduction", std::string("add")}},
                      {TensorSpec{DType::Bool, Shape{2, 3}}, idx, TensorSpec{DType::Bool, Shape{2, 2}}}, 1)
              .find("bool") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::ScatterNd, {{"reduction", std::string("avg")}},
                      {data, TensorSpec{DType::Int64, Shape{1, 1}}, TensorSpec{DType::Float32, Shape{1, 3}}},
                      1)
              .find("reduction 'avg'") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::GatherNd, {}, {data, TensorSpec{DType::Int64, Shape{2, 3}}}, 1)
              .find("last dim of indices") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::GatherNd, {{"batch_dims", int64_t{1}}},
                      {data, TensorSpec{DType::Int64, Shape{3, 1}}}, 1)
              .find("batch dim 0") != std::string::npos);
  REQUIRE(infer_error(EdgeOp::ScatterNd, {},
                      {data, TensorSpec{DType::Int64, Shape{2, 1}}, TensorSpec{DType::Float32, Shape{2, 2}}},
                      1)
              .find("updates float32[2, 2] must be float32[2, 3]") != std::string::npos);
}
