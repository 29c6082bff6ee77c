// The oneDNN backend end to end: graphs lowered whole to oneDNN (partition,
// preprocess, init, execute) give the portable kernels' outputs, at 1 and 2
// threads and with every node traced; folded post-ops (activation, residual
// sum written in place or over a copy), Winograd forced on and off, pooling
// in ceil mode, concat of blocked tensors, broadcast operands, a reshape to
// the delegate's output, batch norm, softmax and the fully connected head;
// concatenated branches written in place.
#include "runtime/backends/onednn/onednn_backend.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "partitioners/onednn/onednn_partitioner.h"
#include "runtime/backend/registry.h"
#include "runtime/backends/onednn/blob_reader.h"
#include "runtime/backends/onednn/compiled_partition.h"
#include "runtime/backends/register_builtin.h"
#include "tests/support/backend_differential.h"
#include "tests/support/graph_builder.h"

namespace etc {
namespace {

using testing::GraphBuilder;

std::vector<float> randoms(size_t n, uint32_t seed, float scale = 0.2f) {
  std::mt19937 rng(seed);
  std::vector<float> v = testing::random_floats(n, rng);
  for (float& x : v) x *= scale;
  return v;
}

ir::Attrs conv_attrs(int64_t group, std::vector<int64_t> pads, std::vector<int64_t> strides = {1, 1}) {
  return ir::Attrs{
      {"strides", strides}, {"pads", pads}, {"dilations", std::vector<int64_t>{1, 1}}, {"group", group}};
}

ir::Attrs pool_attrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                     int64_t ceil = 0) {
  return ir::Attrs{{"kernel_shape", k}, {"strides", s},
                   {"pads", p},         {"dilations", std::vector<int64_t>{1, 1}},
                   {"ceil_mode", ceil}, {"count_include_pad", int64_t{0}}};
}

ir::ValueId conv(GraphBuilder& b, ir::ValueId x, int64_t cin, int64_t cout, int64_t k, uint32_t seed,
                 std::vector<int64_t> strides = {1, 1}, int64_t group = 1) {
  const auto w = b.constant_f32("w" + std::to_string(seed), {cout, cin / group, k, k},
                                randoms(static_cast<size_t>(cout * cin / group * k * k), seed));
  const auto bias =
      b.constant_f32("b" + std::to_string(seed), {cout}, randoms(static_cast<size_t>(cout), seed + 100));
  const int64_t p = k / 2;
  return b.op(EdgeOp::Conv, {x, w, bias}, conv_attrs(group, {p, p, p, p}, strides));
}

void check(const ir::ExportedProgram& program, std::vector<CompileSpec> specs = {}) {
  RuntimeOptions one, two, traced, logged;
  one.num_threads = 1;
  two.num_threads = 2;
  traced.num_threads = 1;
  traced.delegate_detail = DelegateDetail::kPerNode;
  logged.delegate_detail = DelegateDetail::kNodeOutputs;  // every node's output also copied out
  testing::check_backend_matches_portable(
      program, onednn::OnednnPartitioner(std::move(specs)), &onednn::OnednnPartitioner::is_supported,
      testing::BackendCheck{-2.0f, 2.0f, 1e-5f, true, {one, two, traced, logged}});
}

// A residual block: conv -> relu -> conv -> add(x) -> relu, then a strided
// conv with a downsampling branch, global pooling and a linear head.
ir::ExportedProgram residual_net(int64_t c) {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, c, 14, 14});
  const auto stem = b.op(EdgeOp::Relu, {conv(b, x, c, c, 3, 1)});
  const auto branch = conv(b, b.op(EdgeOp::Relu, {conv(b, stem, c, c, 3, 2)}), c, c, 3, 3);
  const auto block = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {branch, stem})});
  const auto down = conv(b, block, c, 2 * c, 1, 4, {2, 2});
  const auto strided =
      conv(b, b.op(EdgeOp::Relu, {conv(b, block, c, 2 * c, 3, 5, {2, 2})}), 2 * c, 2 * c, 3, 6);
  const auto merged = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {down, strided})});
  const auto pooled = b.op(EdgeOp::ReduceMean, {merged},
                           ir::Attrs{{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{0}}});
  const auto wf = b.constant_f32("wf", {10, 2 * c}, randoms(static_cast<size_t>(20 * c), 7));
  const auto bf = b.constant_f32("bf", {10}, randoms(10, 8));
  b.output(b.op(EdgeOp::Gemm, {pooled, wf, bf},
                ir::Attrs{{"trans_a", int64_t{0}}, {"trans_b", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}),
           "logits");
  return b.build();
}

TEST_CASE("oneDNN runs a residual network with folded sums, Winograd on, off and chosen", "[onednn]") {
  for (const char* winograd : {"auto", "on", "off"}) {
    INFO("winograd=" << winograd);
    check(residual_net(32), {CompileSpec::from_string("winograd", winograd)});
  }
  check(residual_net(8));  // few channels: blocked layouts pad them
}

TEST_CASE("oneDNN weights prepacked at compile time are used in place", "[onednn]") {
  for (const char* winograd : {"auto", "off"}) {
    INFO("winograd=" << winograd);
    check(residual_net(32),
          {CompileSpec::from_string("prepack", "on"), CompileSpec::from_string("winograd", winograd)});
  }
  register_builtin_partitioners();
  register_builtin_preprocessors();
  const std::vector<CompileSpec> on = {CompileSpec::from_string("prepack", "on")};
  const ir::ExportedProgram lowered = to_backend(residual_net(32), onednn::OnednnPartitioner(on));
  const std::vector<uint8_t>& blob = lowered.delegates.at(0).processed_bytes;
  AlignedBuffer copy = AlignedBuffer::allocate(blob.size());
  std::memcpy(copy.data(), blob.data(), blob.size());
  Result<onednn::BlobView> view = onednn::read_onednn_blob(copy.data(), blob.size());
  REQUIRE(view.ok());
  REQUIRE(view->has_packed);
  Result<std::unique_ptr<onednn::CompiledPartition>> compiled = onednn::compile_partition(*view, {});
  REQUIRE(compiled.ok());
  CHECK((*compiled)->reads_blob);
  CHECK((*compiled)->packed.empty());  // nothing reordered at init
}

TEST_CASE("oneDNN refuses a prepack spec it does not know", "[onednn]") {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  const std::vector<CompileSpec> bad = {CompileSpec::from_string("prepack", "yes")};
  CHECK_THROWS_WITH(to_backend(residual_net(8), onednn::OnednnPartitioner(bad)),
                    Catch::Contains("compile spec prepack='yes' (expected on, off)"));
}

TEST_CASE("oneDNN keeps a residual that is read later and sums a delegate input", "[onednn]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 16, 9, 9});
  const auto y = b.op(EdgeOp::Add, {conv(b, x, 16, 16, 3, 11), x});  // residual is the delegate's input
  const auto z = b.op(EdgeOp::Relu, {conv(b, y, 16, 16, 3, 12)});
  const auto sum = b.op(EdgeOp::Add, {conv(b, z, 16, 16, 1, 13), z});
  b.output(b.op(EdgeOp::Mul, {sum, z}), "out");  // z read after the sum: not written over
  b.output(y, "y");
  check(b.build());
}

TEST_CASE("oneDNN pools in ceil mode, concatenates blocked tensors and broadcasts", "[onednn]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {2, 12, 11, 11});
  const auto a = b.op(EdgeOp::Relu, {conv(b, x, 12, 20, 3, 21)});
  // 11 -> 6: max pooling adds a window in ceil mode, averaging pads.
  const auto m = b.op(EdgeOp::MaxPool, {a}, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 1));
  const auto v = b.op(EdgeOp::AvgPool, {a}, pool_attrs({3, 3}, {2, 2}, {1, 1, 1, 1}));
  const auto cat = b.op(EdgeOp::Concat, {m, v, b.op(EdgeOp::Sigmoid, {m})}, ir::Attrs{{"axis", int64_t{1}}});
  const auto scale = b.constant_f32("scale", {60, 1, 1}, randoms(60, 22, 1.0f));
  const auto scaled = b.op(EdgeOp::Mul, {scale, cat});  // first operand broadcasts: swapped
  const auto offset = b.constant_f32("offset", {}, {0.25f});
  const auto shifted = b.op(EdgeOp::Sub, {scaled, offset});
  const auto clipped = b.op(EdgeOp::Clip, {shifted}, ir::Attrs{{"min", -0.5f}, {"max", 0.75f}});
  b.output(b.op(EdgeOp::Reshape, {clipped}, ir::Attrs{{"shape", std::vector<int64_t>{2, 60, 36}}}), "flat");
  check(b.build());
}

// Implementation names of a lowered program's oneDNN steps.
std::vector<std::string> step_metadata(const ir::ExportedProgram& program) {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  const ir::ExportedProgram lowered = to_backend(program, onednn::OnednnPartitioner());
  const std::vector<uint8_t>& blob = lowered.delegates.at(0).processed_bytes;
  AlignedBuffer copy = AlignedBuffer::allocate(blob.size());
  std::memcpy(copy.data(), blob.data(), blob.size());
  Result<onednn::BlobView> view = onednn::read_onednn_blob(copy.data(), blob.size());
  REQUIRE(view.ok());
  Result<std::unique_ptr<onednn::CompiledPartition>> compiled = onednn::compile_partition(*view, {});
  REQUIRE(compiled.ok());
  std::vector<std::string> metadata;
  for (const onednn::StepGroup& g : (*compiled)->groups) metadata.push_back(g.metadata);
  return metadata;
}

// An inception block on one image: four branches concatenated on
// channels, one of them the delegate's input (copied into its slice), one
// also read after the concatenation; the concatenation feeding a reshape
// to a delegate output, and a second one whose 20-channel slice breaks the
// channel blocks of either instruction set (16 with AVX-512, 8 with AVX2:
// an ordinary concatenation, the delegate's output).
ir::ExportedProgram inception() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 16, 10, 10});
  const auto b1 = b.op(EdgeOp::Relu, {conv(b, x, 16, 32, 1, 31)});
  const auto b2 =
      b.op(EdgeOp::Relu, {conv(b, b.op(EdgeOp::Relu, {conv(b, x, 16, 16, 1, 32)}), 16, 16, 3, 33)});
  const auto pooled = b.op(EdgeOp::MaxPool, {x}, pool_attrs({3, 3}, {1, 1}, {1, 1, 1, 1}));
  const auto b4 = b.op(EdgeOp::Relu, {conv(b, pooled, 16, 16, 1, 35)});
  const auto cat = b.op(EdgeOp::Concat, {b1, b2, x, b4}, ir::Attrs{{"axis", int64_t{1}}});
  const auto mixed = b.op(EdgeOp::Add, {b.op(EdgeOp::Relu, {conv(b, cat, 80, 32, 1, 36)}), b1});
  const auto c1 = conv(b, mixed, 32, 20, 3, 37);
  const auto c2 = b.op(EdgeOp::Sigmoid, {conv(b, mixed, 32, 32, 1, 38)});
  b.output(b.op(EdgeOp::Concat, {c1, c2}, ir::Attrs{{"axis", int64_t{1}}}), "out");
  b.output(b.op(EdgeOp::Reshape, {cat}, ir::Attrs{{"shape", std::vector<int64_t>{1, 80, 100}}}), "flat");
  return b.build();
}

TEST_CASE("oneDNN writes concatenated branches in place, copying the delegate's input in", "[onednn]") {
  check(inception());
  // The first concatenation written in place but for x; the second, whose
  // slices do not fit the blocks, an ordinary one.
  std::vector<std::string> in_place;
  for (const std::string& m : step_metadata(inception()))
    if (m.rfind("impl=in-place", 0) == 0) in_place.push_back(m);
  CHECK(in_place == std::vector<std::string>{"impl=in-place;copies=1"});
}

// SqueezeNet's fire module: a 1x1 squeeze to 16 channels (which oneDNN
// keeps channels-last), then 1x1 and 3x3 expansions concatenated. Reading
// that channels-last input while writing a blocked slice of the
// concatenation in place has only oneDNN's reference implementation (100x
// slower); the builder gives up the in-place slice or the input's layout
// rather than take it.
ir::ExportedProgram fire_module() {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 64, 27, 27});
  const auto squeeze = b.op(EdgeOp::Relu, {conv(b, x, 64, 16, 1, 41)});
  const auto e1 = b.op(EdgeOp::Relu, {conv(b, squeeze, 16, 64, 1, 42)});
  const auto e3 = b.op(EdgeOp::Relu, {conv(b, squeeze, 16, 64, 3, 43)});
  b.output(b.op(EdgeOp::Concat, {e1, e3}, ir::Attrs{{"axis", int64_t{1}}}), "fire");
  return b.build();
}

TEST_CASE("oneDNN never settles for a reference implementation a layout change avoids", "[onednn]") {
  check(fire_module());
  const std::vector<std::string> metadata = step_metadata(fire_module());
  REQUIRE(metadata.size() >= 3);
  for (const std::string& m : metadata) {
    INFO(m);
    CHECK(m.rfind("impl=ref", 0) != 0);
  }
}

TEST_CASE("oneDNN runs batch norm, depthwise convolution, softmax and matmul", "[onednn]") {
  GraphBuilder b;
  const auto x = b.input("x", DType::Float32, {1, 24, 8, 8});
  const auto d =
      b.op(EdgeOp::Clip, {conv(b, x, 24, 24, 3, 31, {1, 1}, 24)}, ir::Attrs{{"min", 0.0f}, {"max", 6.0f}});
  std::vector<float> var = randoms(24, 33, 1.0f);
  for (float& v : var) v = v * v + 0.5f;
  const auto bn =
      b.op(EdgeOp::BatchNorm,
           {d, b.constant_f32("s", {24}, randoms(24, 32, 1.0f)), b.constant_f32("t", {24}, randoms(24, 34)),
            b.constant_f32("m", {24}, randoms(24, 35)), b.constant_f32("v", {24}, var)},
           ir::Attrs{{"epsilon", 1e-5f}});
  const auto hs = b.op(EdgeOp::HardSwish, {bn});
  const auto flat = b.op(EdgeOp::Reshape, {hs}, ir::Attrs{{"shape", std::vector<int64_t>{1, 24 * 64}}});
  const auto w = b.constant_f32("w", {24 * 64, 32}, randoms(24 * 64 * 32, 36, 0.05f));
  const auto logits = b.op(EdgeOp::MatMul, {flat, w});
  b.output(b.op(EdgeOp::Softmax, {logits}, ir::Attrs{{"axis", int64_t{1}}, {"flatten", int64_t{0}}}), "p");
  b.output(b.op(EdgeOp::LogSoftmax, {logits}, ir::Attrs{{"axis", int64_t{1}}, {"flatten", int64_t{0}}}),
           "logp");
  check(b.build());
}

}  // namespace
}  // namespace etc

namespace etc {
namespace {

// A damaged blob (truncated, or bytes flipped anywhere) is refused with an
// error, or, where the flip leaves a valid blob, creates its primitives;
// never a crash or an out-of-bounds access (run under ASan in CI).
TEST_CASE("oneDNN refuses damaged blobs without crashing", "[onednn]") {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  const bool prepacked = GENERATE(false, true);
  INFO("prepacked " << prepacked);
  std::vector<CompileSpec> specs;
  if (prepacked) specs.push_back(CompileSpec::from_string("prepack", "on"));
  const ir::ExportedProgram lowered = to_backend(residual_net(8), onednn::OnednnPartitioner(specs));
  REQUIRE(lowered.delegates.size() == 1);
  const std::vector<uint8_t>& blob = lowered.delegates[0].processed_bytes;
  AlignedBuffer copy = AlignedBuffer::allocate(blob.size());
  const auto read = [&](size_t size) {
    Result<onednn::BlobView> view = onednn::read_onednn_blob(copy.data(), size);
    if (!view.ok()) return view.message();
    onednn::CompileOptions options;
    Result<std::unique_ptr<onednn::CompiledPartition>> compiled = onednn::compile_partition(*view, options);
    return compiled.ok() ? std::string() : compiled.message();
  };
  std::memcpy(copy.data(), blob.data(), blob.size());
  REQUIRE(read(blob.size()).empty());
  for (size_t cut : {size_t{0}, size_t{7}, size_t{64}, blob.size() / 2, blob.size() - 1}) {
    INFO("truncated to " << cut);
    const std::string error = read(cut);
    CHECK(error.rfind("onednn blob: ", 0) == 0);
  }
  std::mt19937 rng(17);
  uint32_t flat = 0;
  std::memcpy(&flat, blob.data(), 4);
  size_t refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::memcpy(copy.data(), blob.data(), blob.size());
    const size_t at = rng() % (size_t{flat} + 4);  // within the flatbuffer
    copy.data()[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (!read(blob.size()).empty()) ++refused;
  }
  CHECK(refused > 0);
}

}  // namespace
}  // namespace etc

namespace etc {
namespace {

TEST_CASE("the registered onednn backend is loaded from its own library", "[onednn]") {
  REQUIRE(register_builtin_backends().ok());
  const BackendInterface* b = get_backend_class("onednn");
  REQUIRE(b != nullptr);
  // This test binary links the backend's static library for its other
  // cases; the registered one is the loader, which finds libetc_onednn.so
  // where the build put it.
  CHECK(b != onednn::onednn_backend());
  CHECK(b->is_available() == onednn::onednn_backend()->is_available());
  CHECK(b->why_unavailable() == nullptr);
}

}  // namespace
}  // namespace etc
