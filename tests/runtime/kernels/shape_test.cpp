// Portable kernels of the 'shape' family, run through their OpDefs exactly as
// the runtime does (infer, create, run) on small hand-checked cases.
#include <catch2/catch.hpp>
#include <cstring>
#include <numeric>
#include <vector>

#include "compiler/ir/attrs.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/shape_copy.h"

namespace {

using etc::DType;
using etc::EdgeOp;
using etc::Shape;
using etc::Status;
using etc::Tensor;
using etc::TensorSpec;

struct Buffer {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> v(spec.shape.numel());
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

template <typename T>
Buffer make(Shape shape, std::vector<T> values) {
  Buffer b{TensorSpec{etc::dtype_of<T>(), shape}, {}};
  b.bytes.resize(values.size() * sizeof(T));
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

template <typename T>
Buffer iota(Shape shape) {
  std::vector<T> v(shape.numel());
  std::iota(v.begin(), v.end(), T(0));
  return make<T>(shape, v);
}

// Runs one op; `status` receives the result of run() (infer/create must succeed).
std::vector<Buffer> run_op(EdgeOp op, const etc::ir::Attrs& attrs, std::vector<const Buffer*> inputs,
                           int num_outputs, Status* status = nullptr) {
  const etc::OpDef* def = etc::find_op_def(op);
  REQUIRE(def != nullptr);
  const auto views = attrs.views();
  const etc::AttrList list(views);
  std::vector<TensorSpec> in_specs, out_specs(num_outputs);
  for (const Buffer* b : inputs) in_specs.push_back(b->spec);
  Status inferred = etc::infer_outputs(*def, list, in_specs, out_specs);
  INFO(inferred.message());
  REQUIRE(inferred.ok());
  auto kernel = def->create(list, in_specs, out_specs);
  REQUIRE(kernel.ok());
  std::vector<Buffer> outs(num_outputs);
  std::vector<Tensor> in_t, out_t;
  for (const Buffer* b : inputs) in_t.push_back(Tensor{b->spec, const_cast<uint8_t*>(b->bytes.data())});
  for (int i = 0; i < num_outputs; ++i) {
    outs[i].spec = out_specs[i];
    outs[i].bytes.assign(out_specs[i].nbytes(), 0xAB);
    out_t.push_back(Tensor{out_specs[i], outs[i].bytes.data()});
  }
  std::vector<const Tensor*> in_p;
  std::vector<Tensor*> out_p;
  for (auto& t : in_t) in_p.push_back(&t);
  for (auto& t : out_t) out_p.push_back(&t);
  Status s = kernel.get()->run(etc::KernelArgs{in_p, out_p, nullptr});
  if (status)
    *status = s;
  else
    REQUIRE(s.ok());
  return outs;
}

}  // namespace

TEST_CASE("transpose matches index arithmetic for every permutation of a 3-D tensor", "[shape]") {
  const Buffer x = iota<int64_t>(Shape{2, 3, 4});
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    const Buffer y = run_op(EdgeOp::Transpose, {{"perm", perm}}, {&x}, 1)[0];
    const auto v = y.values<int64_t>();
    const Shape& o = y.spec.shape;
    for (int64_t i = 0; i < o[0]; ++i)
      for (int64_t j = 0; j < o[1]; ++j)
        for (int64_t k = 0; k < o[2]; ++k) {
          int64_t idx[3];
          idx[perm[0]] = i, idx[perm[1]] = j, idx[perm[2]] = k;
          CHECK(v[(i * o[1] + j) * o[2] + k] == idx[0] * 12 + idx[1] * 4 + idx[2]);
        }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_CASE("copy plans merge dims that stay contiguous", "[shape]") {
  // A [2,3,4] slice of rows 1..2 of a [2,5,4] tensor: inner [3,4] is one run.
  const etc::CopyPlan p =
      etc::make_copy_plan(std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{20, 4, 1}, 4, 4);
  CHECK(p.rank == 2);
  CHECK(p.dims[1] == 12);
  CHECK(p.strides[1] == 1);
}

TEST_CASE("slice walks backwards with negative steps", "[shape]") {
  const Buffer x = iota<float>(Shape{10});
  // Clamped form of starts=[8], ends=[-100], steps=[-3]: end -1 means "past index 0".
  const Buffer y = run_op(EdgeOp::Slice,
                          {{"starts", std::vector<int64_t>{8}},
                           {"ends", std::vector<int64_t>{-1}},
                           {"steps", std::vector<int64_t>{-3}}},
                          {&x}, 1)[0];
  CHECK(y.values<float>() == std::vector<float>{8, 5, 2});
}

TEST_CASE("slice rejects bounds that leave the input", "[shape]") {
  const etc::OpDef* def = etc::find_op_def(EdgeOp::Slice);
  const etc::ir::Attrs attrs{{"starts", std::vector<int64_t>{0}},
                             {"ends", std::vector<int64_t>{11}},
                             {"steps", std::vector<int64_t>{1}}};
  const auto views = attrs.views();
  std::vector<TensorSpec> in{TensorSpec{DType::Float32, Shape{10}}}, out(1);
  CHECK_FALSE(etc::infer_outputs(*def, etc::AttrList(views), in, out).ok());
}

TEST_CASE("pad reflects, extends edges and crops with negative pads", "[shape]") {
  const Buffer x = make<int32_t>(Shape{3}, {1, 2, 3});
  const auto pad = [&](std::vector<int64_t> pads, const char* mode) {
    return run_op(EdgeOp::Pad, {{"pads", pads}, {"mode", std::string(mode)}, {"value", 9.0f}}, {&x}, 1)[0]
        .values<int32_t>();
  };
  CHECK(pad({2, -1}, "reflect") == std::vector<int32_t>{3, 2, 1, 2});
  CHECK(pad({2, 1}, "edge") == std::vector<int32_t>{1, 1, 1, 2, 3, 3});
  CHECK(pad({1, 2}, "constant") == std::vector<int32_t>{9, 1, 2, 3, 9, 9});
  CHECK(pad({5, 0}, "reflect") == std::vector<int32_t>{2, 1, 2, 3, 2, 1, 2, 3});
}

TEST_CASE("pad fills whole rows of padded outer dims", "[shape]") {
  const Buffer x = iota<uint8_t>(Shape{2, 2});
  const Buffer y =
      run_op(EdgeOp::Pad, {{"pads", std::vector<int64_t>{1, 0, 0, 1}}, {"mode", std::string("constant")}},
             {&x}, 1)[0];
  CHECK(y.values<uint8_t>() == std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 2, 3, 0});
}

TEST_CASE("gather takes negative int32 indices and fails on out-of-range ones", "[shape]") {
  const Buffer data = iota<double>(Shape{3, 2});
  const Buffer idx = make<int32_t>(Shape{2}, {-1, 0});
  const Buffer y = run_op(EdgeOp::Gather, {{"axis", int64_t{0}}}, {&data, &idx}, 1)[0];
  CHECK(y.values<double>() == std::vector<double>{4, 5, 0, 1});
  const Buffer cols = make<int64_t>(Shape{}, {1});
  const Buffer col = run_op(EdgeOp::Gather, {{"axis", int64_t{1}}}, {&data, &cols}, 1)[0];
  CHECK(col.spec.shape == Shape{3});
  CHECK(col.values<double>() == std::vector<double>{1, 3, 5});
  const Buffer bad = make<int64_t>(Shape{1}, {3});
  Status s;
  run_op(EdgeOp::Gather, {{"axis", int64_t{0}}}, {&data, &bad}, 1, &s);
  CHECK(s.error() == etc::Error::OutOfRange);
}

TEST_CASE("tile, expand, concat and split move whole blocks", "[shape]") {
  Buffer x = make<uint8_t>(Shape{1, 2}, {1, 0});
  x.spec.dtype = DType::Bool;
  const Buffer t = run_op(EdgeOp::Tile, {{"repeats", std::vector<int64_t>{2, 2}}}, {&x}, 1)[0];
  CHECK(t.spec == TensorSpec{DType::Bool, Shape{2, 4}});
  CHECK(t.values<uint8_t>() == std::vector<uint8_t>{1, 0, 1, 0, 1, 0, 1, 0});
  const Buffer e = run_op(EdgeOp::Expand, {{"shape", std::vector<int64_t>{3, 2}}}, {&x}, 1)[0];
  CHECK(e.values<uint8_t>() == std::vector<uint8_t>{1, 0, 1, 0, 1, 0});
  const Buffer a = iota<int8_t>(Shape{2, 1}), b = iota<int8_t>(Shape{2, 2});
  const Buffer c = run_op(EdgeOp::Concat, {{"axis", int64_t{1}}}, {&a, &b}, 1)[0];
  CHECK(c.values<int8_t>() == std::vector<int8_t>{0, 0, 1, 1, 2, 3});
  const auto parts =
      run_op(EdgeOp::Split, {{"axis", int64_t{1}}, {"sizes", std::vector<int64_t>{2, 0, 1}}}, {&c}, 3);
  CHECK(parts[0].values<int8_t>() == std::vector<int8_t>{0, 0, 1, 2});
  CHECK(parts[1].spec.shape == Shape{2, 0});
  CHECK(parts[2].values<int8_t>() == std::vector<int8_t>{1, 3});
}

TEST_CASE("depth_to_space orders channels per mode and space_to_depth inverts DCR", "[shape]") {
  const Buffer x = iota<float>(Shape{1, 8, 2, 3});  // the example of the ONNX operator docs
  const auto attrs = [](const char* mode) {
    return etc::ir::Attrs{{"blocksize", int64_t{2}}, {"mode", std::string(mode)}};
  };
  const Buffer dcr = run_op(EdgeOp::DepthToSpace, attrs("DCR"), {&x}, 1)[0];
  const Buffer crd = run_op(EdgeOp::DepthToSpace, attrs("CRD"), {&x}, 1)[0];
  REQUIRE(dcr.spec.shape == Shape{1, 2, 4, 6});
  const auto d = dcr.values<float>(), c = crd.values<float>();
  CHECK(std::vector<float>(d.begin(), d.begin() + 12) ==
        std::vector<float>{0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38});
  CHECK(std::vector<float>(c.begin(), c.begin() + 12) ==
        std::vector<float>{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20});
  const Buffer back = run_op(EdgeOp::SpaceToDepth, {{"blocksize", int64_t{2}}}, {&dcr}, 1)[0];
  CHECK(back.values<float>() == x.values<float>());
}
