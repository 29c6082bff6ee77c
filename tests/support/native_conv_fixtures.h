#pragma once
// Fixtures of the native convolution tests (runtime/backends/xnnpack/
// native_conv.h): a runner that passes compile specs and a thread count to
// the XNNPACK backend, convolution geometries with random data, a
// double-precision reference, and blob builders.

#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/backends/xnnpack/native_plan.h"
#include "runtime/backends/xnnpack/stages.h"
#include "tests/support/random.h"
#include "tests/support/xnnpack_blob_builder.h"

namespace etc::testing::native_conv {

// The native instruction sets this CPU runs, widest first: a test that
// takes one with GENERATE(from_range(native_isas())) and holds a NativeIsaCap
// runs once per set, so CPUs with AVX-512 test the AVX2 kernels too.
inline std::vector<xnnpack::NativeIsa> native_isas() {
  std::vector<xnnpack::NativeIsa> isas;
  for (xnnpack::NativeIsa isa : {xnnpack::NativeIsa::kAvx512, xnnpack::NativeIsa::kAvx2})
    if (xnnpack::native_isa() >= isa) isas.push_back(isa);
  return isas;
}

inline const char* isa_name(xnnpack::NativeIsa isa) {
  return isa == xnnpack::NativeIsa::kAvx512 ? "AVX-512" : isa == xnnpack::NativeIsa::kAvx2 ? "AVX2" : "none";
}

// Caps native_isa() at `isa` for its lifetime.
struct NativeIsaCap {
  explicit NativeIsaCap(xnnpack::NativeIsa isa) { xnnpack::cap_native_isa(isa); }
  ~NativeIsaCap() { xnnpack::cap_native_isa(xnnpack::NativeIsa::kAvx512); }
  NativeIsaCap(const NativeIsaCap&) = delete;
  NativeIsaCap& operator=(const NativeIsaCap&) = delete;
};

using xnnpack::fb::BoundaryLayout;
using xnnpack::fb::NodeType;
using Spec = std::pair<std::string, std::string>;

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs a blob through the backend directly, as the executor would, with
// compile specs and a thread count; arguments are caller-owned buffers (so a
// test can move them between runs).
class SpecRunner {
 public:
  explicit SpecRunner(int num_threads = 0) : init_context_(nullptr, "forward", &options_) {
    options_.num_threads = num_threads;
    options_.fit_threads_to_work = false;  // the threads asked for, however small the blob
  }
  ~SpecRunner() {
    if (handle_.ok()) backend_->destroy(handle_.get());
  }
  SpecRunner(const SpecRunner&) = delete;
  SpecRunner& operator=(const SpecRunner&) = delete;

  Status init(const std::vector<uint8_t>& blob, const std::vector<Spec>& specs = {}) {
    blob_ = blob;
    std::vector<CompileSpecView> views;
    for (const Spec& s : specs)
      views.push_back(CompileSpecView{
          s.first, Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.second.data()), s.second.size())});
    FreeableBuffer processed(blob_.data(), blob_.size());
    handle_ = backend_->init(init_context_, &processed, Span<const CompileSpecView>(views));
    if (!handle_.ok()) return handle_.failure();
    return Status::Ok();
  }

  struct Arg {
    Shape shape;
    float* data;
  };
  Status execute(const std::vector<Arg>& args) {
    std::vector<Tensor> tensors(args.size());
    std::vector<EValue> values;
    std::vector<EValue*> pointers;
    values.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      tensors[i].spec = TensorSpec{DType::Float32, args[i].shape};
      tensors[i].data = args[i].data;
      values.emplace_back(&tensors[i]);
    }
    for (EValue& v : values) pointers.push_back(&v);
    BackendExecutionContext context(nullptr, nullptr, "forward");
    return backend_->execute(context, handle_.get(), Span<EValue*>(pointers));
  }

 private:
  BackendInterface* backend_ = xnnpack::xnnpack_backend();
  RuntimeOptions options_;
  BackendInitContext init_context_;
  Result<DelegateHandle*> handle_ = Error::InvalidState;
  std::vector<uint8_t> blob_;
};

// One convolution: NHWC input [n, h, w, c], OHWI filter, output [n, oh, ow, o].
struct Geometry {
  const char* name = "";
  uint64_t n = 1, h = 8, w = 8, c = 8, o = 32;
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  std::array<uint32_t, 4> pad = {0, 0, 0, 0};  // top, right, bottom, left
  bool bias = true;
  float lo = -kInf, hi = kInf;
  uint32_t groups = 1;
  bool nchw = false;         // NCHW delegate boundary (layout conversion) instead of NHWC bound in place
  bool native = true;        // expected can_run_natively (native under "on")
  bool auto_native = false;  // expected runs_natively (native under "auto")

  uint64_t oh() const { return (h + pad[0] + pad[2] - (uint64_t{kh} - 1) * dh - 1) / sh + 1; }
  uint64_t ow() const { return (w + pad[3] + pad[1] - (uint64_t{kw} - 1) * dw - 1) / sw + 1; }
  size_t in_numel() const { return n * h * w * c; }
  size_t out_numel() const { return n * oh() * ow() * o; }
  size_t filter_numel() const { return o * kh * kw * (c / groups); }
};

struct ConvData {
  std::vector<float> x, filter, bias;  // x NHWC, filter OHWI
};

inline ConvData random_data(const Geometry& g, uint32_t seed) {
  std::mt19937 rng(seed);
  ConvData d;
  d.x = testing::random_floats(g.in_numel(), rng);
  d.filter = testing::random_floats(g.filter_numel(), rng);
  if (g.bias) d.bias = testing::random_floats(g.o, rng);
  return d;
}

// Double-precision NHWC reference, then clamp.
inline std::vector<float> reference(const Geometry& g, const std::vector<float>& x,
                                    const std::vector<float>& filter, const std::vector<float>& bias) {
  const int64_t oh = static_cast<int64_t>(g.oh()), ow = static_cast<int64_t>(g.ow());
  const int64_t ig = static_cast<int64_t>(g.c / g.groups), og = static_cast<int64_t>(g.o / g.groups);
  const int64_t h = static_cast<int64_t>(g.h), w = static_cast<int64_t>(g.w), c = static_cast<int64_t>(g.c);
  const int64_t o = static_cast<int64_t>(g.o);
  std::vector<float> y(g.out_numel());
  for (int64_t b = 0; b < static_cast<int64_t>(g.n); ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t oc = 0; oc < o; ++oc) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
          const int64_t group = oc / og;
          for (int64_t u = 0; u < g.kh; ++u)
            for (int64_t v = 0; v < g.kw; ++v) {
              const int64_t yy = i * g.sh + u * g.dh - g.pad[0], xx = j * g.sw + v * g.dw - g.pad[3];
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              for (int64_t ic = 0; ic < ig; ++ic)
                acc += double(x[static_cast<size_t>(((b * h + yy) * w + xx) * c + group * ig + ic)]) *
                       double(filter[static_cast<size_t>(((oc * g.kh + u) * g.kw + v) * ig + ic)]);
            }
          const float r = static_cast<float>(acc);
          y[static_cast<size_t>(((b * oh + i) * ow + j) * o + oc)] = r < g.lo ? g.lo : (r > g.hi ? g.hi : r);
        }
  return y;
}

inline void set_window(testing::XnnpackNodeSpec& node, const Geometry& g) {
  node.padding = {g.pad[0], g.pad[1], g.pad[2], g.pad[3]};
  node.kernel = {g.kh, g.kw};
  node.stride = {g.sh, g.sw};
  node.dilation = {g.dh, g.dw};
  node.groups = g.groups;
  node.group_input_channels = g.c / g.groups;
  node.group_output_channels = g.o / g.groups;
  node.output_min = g.lo;
  node.output_max = g.hi;
}

// The filter of a one-group convolution in the native kernel's panels
// (native_plan.h), as preprocess packs it ahead of time.
inline std::vector<float> native_panels(const Geometry& g, const ConvData& d) {
  const size_t depth = size_t{g.kh} * g.kw * g.c;
  std::vector<float> panels(xnnpack::native_panels_floats(g.o, depth));
  xnnpack::pack_native_panels(d.filter.data(), g.bias ? d.bias.data() : nullptr, g.o, depth, panels.data());
  return panels;
}

// The filter transformed for Winograd F(tile x tile, 3x3), tile 4 or 2 (a
// 3x3 one-group geometry).
inline std::vector<float> winograd_form(const Geometry& g, const ConvData& d, size_t tile = 4) {
  REQUIRE((tile == 4 || tile == 2));
  std::vector<float> form(xnnpack::winograd_filter_floats(g.o, g.c, tile));
  xnnpack::transform_winograd_filter(d.filter.data(), g.o, g.c, tile, form.data());
  return form;
}

// The delegate: input 0 -> Convolution2d -> output 0; with `packed`, its
// filter packed ahead of time; with `transformed` 4 or 2, its filter also
// transformed ahead of time for Winograd F(4x4, 3x3) or F(2x2, 3x3) (the
// node's winograd_filter).
inline std::vector<uint8_t> conv_blob(const Geometry& g, const ConvData& d, uint32_t flags = 0,
                                      bool packed = false, size_t transformed = 0) {
  XnnpackBlobBuilder b;
  const uint32_t x =
      b.input({g.n, g.h, g.w, g.c}, 0, g.nchw ? BoundaryLayout::NchwToNhwc : BoundaryLayout::Same);
  const uint32_t filter = packed ? b.packed_constant({g.o, g.kh, g.kw, g.c}, native_panels(g, d))
                                 : b.constant({g.o, g.kh, g.kw, g.c / g.groups}, d.filter);
  std::vector<uint32_t> inputs = {x, filter};
  if (g.bias) inputs.push_back(b.constant({g.o}, d.bias));
  const uint32_t y =
      b.output({g.n, g.oh(), g.ow(), g.o}, 0, g.nchw ? BoundaryLayout::NhwcToNchw : BoundaryLayout::Same);
  auto& node = b.node(NodeType::Convolution2d, inputs, {y});
  set_window(node, g);
  node.flags = flags;
  if (transformed != 0)
    node.winograd_filter = static_cast<int32_t>(b.packed_constant(
        {g.o, 3, 3, g.c}, winograd_form(g, d, transformed), xnnpack::winograd_packing(transformed)));
  if (flags & XNN_FLAG_TENSORFLOW_SAME_PADDING) node.padding = {0, 0, 0, 0};
  return b.build();
}

// NHWC <-> NCHW for the delegate arguments of `nchw` geometries.
inline std::vector<float> nhwc_to_nchw(const std::vector<float>& v, uint64_t n, uint64_t hw, uint64_t c) {
  std::vector<float> r(v.size());
  for (uint64_t b = 0; b < n; ++b)
    for (uint64_t p = 0; p < hw; ++p)
      for (uint64_t ch = 0; ch < c; ++ch) r[(b * c + ch) * hw + p] = v[(b * hw + p) * c + ch];
  return r;
}
inline std::vector<float> nchw_to_nhwc(const std::vector<float>& v, uint64_t n, uint64_t hw, uint64_t c) {
  std::vector<float> r(v.size());
  for (uint64_t b = 0; b < n; ++b)
    for (uint64_t p = 0; p < hw; ++p)
      for (uint64_t ch = 0; ch < c; ++ch) r[(b * hw + p) * c + ch] = v[(b * c + ch) * hw + p];
  return r;
}

// x -> Clamp [-0.75, 0.75] -> s -> conv1 (g1) -> a -> conv2 (g2) -> b;
// Add(a, b) -> c -> conv3 (g3, grouped: XNNPACK's) -> y: a delegate whose
// stages alternate between the backend's own kernel and XNNPACK. x is input
// 0 (NCHW), y output 0 (NCHW); with c_output, c is output 1 (NHWC). The
// three geometries share h x w; g1.c is x's channels.
struct MixedStages {
  ConvData d1, d2, d3;
  std::vector<uint8_t> blob;
  std::vector<float> c_ref;  // c from a double-precision reference, NHWC
};

inline MixedStages mixed_stages(const Geometry& g1, const Geometry& g2, const Geometry& g3, uint32_t seed,
                                bool c_output) {
  using xnnpack::fb::BoundaryLayout;
  using xnnpack::fb::NodeType;
  MixedStages m{random_data(g1, seed), random_data(g2, seed + 1), random_data(g3, seed + 2), {}, {}};
  const uint64_t h = g1.h, w = g1.w;
  testing::XnnpackBlobBuilder b;
  const uint32_t x = b.input({1, h, w, g1.c}, 0, BoundaryLayout::NchwToNhwc);
  const uint32_t s = b.tensor({1, h, w, g1.c});
  const uint32_t a = b.tensor({1, h, w, g1.o});
  const uint32_t bt = b.tensor({1, h, w, g2.o});
  const uint32_t c = c_output ? b.output({1, h, w, g2.o}, 1) : b.tensor({1, h, w, g2.o});
  const uint32_t y = b.output({1, h, w, g3.o}, 0, BoundaryLayout::NhwcToNchw);
  auto& clamp = b.node(NodeType::Clamp, {x}, {s});
  clamp.output_min = -0.75f;
  clamp.output_max = 0.75f;
  const auto conv = [&](uint32_t in, const Geometry& g, const ConvData& d, uint32_t out) {
    set_window(
        b.node(NodeType::Convolution2d,
               {in, b.constant({g.o, g.kh, g.kw, g.c / g.groups}, d.filter), b.constant({g.o}, d.bias)},
               {out}),
        g);
  };
  conv(s, g1, m.d1, a);
  conv(a, g2, m.d2, bt);
  b.node(NodeType::Add, {a, bt}, {c});
  conv(c, g3, m.d3, y);
  m.blob = b.build();
  std::vector<float> s_ref = m.d1.x;
  for (float& v : s_ref) v = std::min(std::max(v, -0.75f), 0.75f);
  const std::vector<float> a_ref = reference(g1, s_ref, m.d1.filter, m.d1.bias);
  const std::vector<float> b_ref = reference(g2, a_ref, m.d2.filter, m.d2.bias);
  m.c_ref.resize(a_ref.size());
  for (size_t i = 0; i < a_ref.size(); ++i) m.c_ref[i] = a_ref[i] + b_ref[i];
  return m;
}

inline Shape shape_of(std::initializer_list<uint64_t> dims) {
  Shape s;
  for (uint64_t d : dims) s.push_back(static_cast<int64_t>(d));
  return s;
}

// Runs the single-convolution blob once; returns the output in NHWC.
inline std::vector<float> run_conv(const Geometry& g, const ConvData& d, const std::vector<Spec>& specs,
                                   int threads = 0, bool packed = false, size_t transformed = 0) {
  SpecRunner runner(threads);
  const Status s = runner.init(conv_blob(g, d, 0, packed, transformed), specs);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<float> x = g.nchw ? nhwc_to_nchw(d.x, g.n, g.h * g.w, g.c) : d.x;
  std::vector<float> y(g.out_numel(), -12345.0f);
  const Shape in_shape = g.nchw ? shape_of({g.n, g.c, g.h, g.w}) : shape_of({g.n, g.h, g.w, g.c});
  const Shape out_shape =
      g.nchw ? shape_of({g.n, g.o, g.oh(), g.ow()}) : shape_of({g.n, g.oh(), g.ow(), g.o});
  const Status e = runner.execute({{in_shape, x.data()}, {out_shape, y.data()}});
  INFO(e.message());
  REQUIRE(e.ok());
  return g.nchw ? nchw_to_nhwc(y, g.n, g.oh() * g.ow(), g.o) : y;
}

// Elements farther than `tolerance` relative (with an absolute floor of
// `tolerance` near zero) from `want`.
inline size_t count_far(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double(got[i]) - double(want[i])) <= tolerance * (1.0 + std::abs(double(want[i]))))) {
      if (bad < 3) UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
      ++bad;
    }
  return bad;
}

inline size_t count_different(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      if (differ < 3) UNSCOPED_INFO("element " << i << ": " << a[i] << " vs " << b[i]);
      ++differ;
    }
  return differ;
}

// How node 0 of `blob` is classified, and whether plan_stages makes stage 0
// native in each mode (never with kOff).
struct Classification {
  bool can_run = false;     // can_run_natively
  bool runs = false;        // runs_natively
  bool all_stage = false;   // plan_stages(kAll) stage 0 native
  bool auto_stage = false;  // plan_stages(kAuto) stage 0 native
};

inline Classification classify(const std::vector<uint8_t>& blob) {
  auto view = xnnpack::read_xnnpack_blob(blob.data(), blob.size());
  INFO((view.ok() ? std::string() : view.message()));
  REQUIRE(view.ok());
  const xnnpack::fb::Node* node = view.get().graph->nodes()->Get(0);
  Classification c;
  c.can_run = xnnpack::can_run_natively(*node);
  c.runs = xnnpack::runs_natively(view.get(), *node);
  const auto stage0 = [&](xnnpack::NativeConvolutions mode) {
    const xnnpack::StagePlan plan = xnnpack::plan_stages(view.get(), mode);
    REQUIRE(plan.stages.size() == 1);
    return plan.stages[0].native;
  };
  c.all_stage = stage0(xnnpack::NativeConvolutions::kAll);
  c.auto_stage = stage0(xnnpack::NativeConvolutions::kAuto);
  CHECK_FALSE(stage0(xnnpack::NativeConvolutions::kOff));
  return c;
}

// Checks the classification of `blob` against what `g` expects.
inline void check_classification(const std::vector<uint8_t>& blob, bool native, bool auto_native) {
  const Classification c = classify(blob);
  CHECK(c.can_run == native);
  CHECK(c.all_stage == native);
  CHECK(c.runs == auto_native);
  CHECK(c.auto_stage == auto_native);
}

// Spec "on" runs every one-group case natively; a few are large enough for
// "auto" (runs_natively) too. Both keep Winograd off, so a native
// convolution sums as XNNPACK does (the same bits); kWinograd runs every
// 3x3 stride-1 one as Winograd (native_winograd.h), kWinograd4x4 and
// kWinograd2x2 as that variant.
inline const std::vector<Spec> kOn = {{"native_convolution", "on"}, {"winograd", "off"}};
inline const std::vector<Spec> kAuto = {{"native_convolution", "auto"}, {"winograd", "off"}};
inline const std::vector<Spec> kOff = {{"native_convolution", "off"}};
inline const std::vector<Spec> kWinograd = {{"native_convolution", "on"}, {"winograd", "on"}};
inline const std::vector<Spec> kWinograd4x4 = {{"native_convolution", "on"}, {"winograd", "4x4"}};
inline const std::vector<Spec> kWinograd2x2 = {{"native_convolution", "on"}, {"winograd", "2x2"}};

// Per output element: bias plus the sum of |x * w| over its window, the
// scale of the rounding error of any way of summing it (Winograd's
// transforms scale it by a constant).
inline std::vector<double> magnitude(const Geometry& g, const std::vector<float>& x,
                                     const std::vector<float>& filter, const std::vector<float>& bias) {
  std::vector<float> ax(x.size()), af(filter.size()), ab(bias.size());
  for (size_t i = 0; i < x.size(); ++i) ax[i] = std::abs(x[i]);
  for (size_t i = 0; i < filter.size(); ++i) af[i] = std::abs(filter[i]);
  for (size_t i = 0; i < bias.size(); ++i) ab[i] = std::abs(bias[i]);
  Geometry unclamped = g;
  unclamped.lo = -kInf, unclamped.hi = kInf;
  const std::vector<float> m = reference(unclamped, ax, af, ab);
  return std::vector<double>(m.begin(), m.end());
}

// Elements farther from `want` than `tolerance` times their magnitude.
inline size_t count_far_scaled(const std::vector<float>& got, const std::vector<float>& want,
                               const std::vector<double>& scale, double tolerance) {
  REQUIRE(got.size() == want.size());
  REQUIRE(got.size() == scale.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double(got[i]) - double(want[i])) <= tolerance * scale[i])) {
      if (bad < 3)
        UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i] << ", scale "
                                 << scale[i]);
      ++bad;
    }
  return bad;
}

}  // namespace etc::testing::native_conv
