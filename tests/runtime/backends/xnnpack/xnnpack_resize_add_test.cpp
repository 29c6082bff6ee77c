// An Add of a native nearest resize's output and a tensor computed before
// the resize (a feature pyramid's top-down sum) folds into the resize
// (stages.h: the resize writes the Add's output, the other operand as its
// residual): the upsampled tensor is never written. Against a reference and
// XNNPACK alone, in either operand order and with the Add's clamp; left
// apart where the other operand comes later or the upsampled tensor is read
// elsewhere.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/native_conv_fixtures.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc {
namespace {

using namespace testing::native_conv;
using testing::XnnpackBlobBuilder;
using xnnpack::fb::NodeType;

constexpr uint64_t kH = 5, kW = 7, kC = 24, kOH = 10, kOW = 14;

struct Variant {
  bool swap = false;          // Add(z, up) instead of Add(up, z)
  float lo = -kInf;           // the Add's clamp
  bool z_after = false;       // z (a clamp of input 1) computed after the resize
  bool up_is_output = false;  // the upsampled tensor is delegate output 1 too
};

// x (input 0, [1, 5, 7, 24]) -> ResizeNearest 2x -> up; z = Clamp(input 1)
// ([1, 10, 14, 24]); Add(up, z) -> y (output 0).
std::vector<uint8_t> fpn_blob(const Variant& v) {
  XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, kH, kW, kC}, 0);
  const uint32_t w = b.input({1, kOH, kOW, kC}, 1);
  const uint32_t y = b.output({1, kOH, kOW, kC}, 0);
  const uint32_t up = v.up_is_output ? b.output({1, kOH, kOW, kC}, 1) : b.tensor({1, kOH, kOW, kC});
  const uint32_t z = b.tensor({1, kOH, kOW, kC});
  const auto clamp_z = [&] {
    auto& c = b.node(NodeType::Clamp, {w}, {z});
    c.output_min = -1.5f, c.output_max = 1.5f;
  };
  if (!v.z_after) clamp_z();
  auto& resize = b.node(NodeType::ResizeNearest, {x}, {up});
  for (uint64_t r = 0; r < kOH; ++r) resize.indices.push_back(r / 2);
  for (uint64_t c = 0; c < kOW; ++c) resize.indices.push_back(c / 2);
  if (v.z_after) clamp_z();
  b.node(NodeType::Add, v.swap ? std::vector<uint32_t>{z, up} : std::vector<uint32_t>{up, z}, {y})
      .output_min = v.lo;
  return b.build();
}

xnnpack::StagePlan plan_of(const std::vector<uint8_t>& blob) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  REQUIRE(view.ok());
  return xnnpack::plan_stages(view.get(), xnnpack::NativeConvolutions::kAuto);
}

TEST_CASE("xnnpack folds an Add into the nearest resize that feeds it", "[xnnpack]") {
  std::mt19937 rng(81);
  const std::vector<float> x = testing::random_floats(kH * kW * kC, rng, -2.0f, 2.0f);
  const std::vector<float> w = testing::random_floats(kOH * kOW * kC, rng, -2.0f, 2.0f);
  for (const Variant& v : {Variant{}, Variant{.swap = true}, Variant{.lo = 0.0f}, Variant{.z_after = true}}) {
    INFO("swap " << v.swap << ", lo " << v.lo << ", z after " << v.z_after);
    const std::vector<uint8_t> blob = fpn_blob(v);
    const xnnpack::StagePlan plan = plan_of(blob);
    const size_t resize = v.z_after ? 0 : 1, add = 2;
    CHECK(plan.writes_into[resize].active == !v.z_after);
    CHECK(plan.elided[add] == !v.z_after);
    if (!v.z_after) CHECK(plan.offset_of[3] == xnnpack::kNoOffset);  // `up` is never written
    std::vector<float> want(kOH * kOW * kC);
    for (uint64_t r = 0; r < kOH; ++r)
      for (uint64_t c = 0; c < kOW; ++c)
        for (uint64_t ch = 0; ch < kC; ++ch) {
          const size_t o = (r * kOW + c) * kC + ch;
          want[o] =
              std::max(x[((r / 2) * kW + c / 2) * kC + ch] + std::min(std::max(w[o], -1.5f), 1.5f), v.lo);
        }
    for (const auto& [specs, threads] :
         std::vector<std::pair<std::vector<Spec>, int>>{{kAuto, 1}, {kAuto, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      std::vector<float> xin = x, win = w, y(want.size(), -7.0f);
      REQUIRE(runner
                  .execute({{shape_of({1, kH, kW, kC}), xin.data()},
                            {shape_of({1, kOH, kOW, kC}), win.data()},
                            {shape_of({1, kOH, kOW, kC}), y.data()}})
                  .ok());
      CHECK(count_far(y, want, 1e-6) == 0);
    }
  }
  // The upsampled tensor is needed on its own.
  CHECK(!plan_of(fpn_blob({.up_is_output = true})).writes_into[1].active);
}

TEST_CASE("xnnpack resize-add writes over its residual where the residual dies there", "[xnnpack]") {
  // z = Clamp(input 1); up = ResizeNearest(x); s = Add(up, z); then
  // y = Clamp(s) (z dies at the Add) or y = Add(s, z) (z read again).
  std::mt19937 rng(82);
  const std::vector<float> x = testing::random_floats(kH * kW * kC, rng, -2.0f, 2.0f);
  const std::vector<float> w = testing::random_floats(kOH * kOW * kC, rng, -2.0f, 2.0f);
  for (bool z_read_again : {false, true}) {
    INFO("z read again: " << z_read_again);
    XnnpackBlobBuilder b;
    const uint32_t xi = b.input({1, kH, kW, kC}, 0);
    const uint32_t wi = b.input({1, kOH, kOW, kC}, 1);
    const uint32_t z = b.tensor({1, kOH, kOW, kC});
    const uint32_t up = b.tensor({1, kOH, kOW, kC});
    const uint32_t s = b.tensor({1, kOH, kOW, kC});
    const uint32_t y = b.output({1, kOH, kOW, kC}, 0);
    auto& cz = b.node(NodeType::Clamp, {wi}, {z});
    cz.output_min = -1.5f, cz.output_max = 1.5f;
    auto& resize = b.node(NodeType::ResizeNearest, {xi}, {up});
    for (uint64_t r = 0; r < kOH; ++r) resize.indices.push_back(r / 2);
    for (uint64_t c = 0; c < kOW; ++c) resize.indices.push_back(c / 2);
    b.node(NodeType::Add, {up, z}, {s});
    if (z_read_again) {
      b.node(NodeType::Add, {s, z}, {y});
    } else {
      auto& cy = b.node(NodeType::Clamp, {s}, {y});
      cy.output_min = -1.0f, cy.output_max = 1.0f;
    }
    const std::vector<uint8_t> blob = b.build();
    const xnnpack::StagePlan plan = plan_of(blob);
    REQUIRE(plan.writes_into[1].active);
    REQUIRE(plan.offset_of[s] != xnnpack::kNoOffset);
    REQUIRE(plan.offset_of[z] != xnnpack::kNoOffset);
    const int64_t n = kOH * kOW * kC;
    if (z_read_again)
      CHECK(std::abs(plan.offset_of[s] - plan.offset_of[z]) >= n);
    else
      CHECK(plan.offset_of[s] == plan.offset_of[z]);
    std::vector<float> want(static_cast<size_t>(n));
    for (uint64_t r = 0; r < kOH; ++r)
      for (uint64_t c = 0; c < kOW; ++c)
        for (uint64_t ch = 0; ch < kC; ++ch) {
          const size_t o = (r * kOW + c) * kC + ch;
          const float zv = std::min(std::max(w[o], -1.5f), 1.5f);
          const float sv = x[((r / 2) * kW + c / 2) * kC + ch] + zv;
          want[o] = z_read_again ? sv + zv : std::min(std::max(sv, -1.0f), 1.0f);
        }
    for (const auto& [specs, threads] :
         std::vector<std::pair<std::vector<Spec>, int>>{{kAuto, 1}, {kAuto, 2}, {kOff, 1}}) {
      INFO(specs[0].second << ", " << threads << " threads");
      SpecRunner runner(threads);
      REQUIRE(runner.init(blob, specs).ok());
      std::vector<float> xin = x, win = w, yout(want.size(), -7.0f);
      REQUIRE(runner
                  .execute({{shape_of({1, kH, kW, kC}), xin.data()},
                            {shape_of({1, kOH, kOW, kC}), win.data()},
                            {shape_of({1, kOH, kOW, kC}), yout.data()}})
                  .ok());
      CHECK(count_far(yout, want, 1e-6) == 0);
    }
  }
}

}  // namespace
}  // namespace etc
