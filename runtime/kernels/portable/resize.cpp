// Portable kernels of the 'resize' family: N-d nearest / n-linear / cubic
// resampling with the ONNX coordinate transforms. create() turns the
// attributes into per-axis taps (resize_plan.h); run() only gathers and blends.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/resize_plan.h"

namespace etc {
namespace {

struct ResizeConfig {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordMode coord = ResizeCoordMode::HalfPixel;
  ResizeNearestMode nearest = ResizeNearestMode::RoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;
  std::vector<int64_t> sizes;
  std::vector<float> scales;  // empty: out / in
  std::vector<float> roi;     // empty: whole input
};

Result<ResizeConfig> parse_config(const AttrList& attrs, int rank) {
  ResizeConfig c;
  ETC_ASSIGN_OR_RETURN(std::string_view mode, attrs.get_string("mode", "nearest"));
  ETC_ASSIGN_OR_RETURN(c.mode, parse_resize_mode(mode));
  ETC_ASSIGN_OR_RETURN(std::string_view coord,
                       attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  ETC_ASSIGN_OR_RETURN(c.coord, parse_resize_coord_mode(coord));
  ETC_ASSIGN_OR_RETURN(std::string_view nearest, attrs.get_string("nearest_mode", "round_prefer_floor"));
  ETC_ASSIGN_OR_RETURN(c.nearest, parse_resize_nearest_mode(nearest));
  ETC_ASSIGN_OR_RETURN(c.cubic_coeff_a, attrs.get_float("cubic_coeff_a", -0.75f));
  ETC_ASSIGN_OR_RETURN(int64_t exclude, attrs.get_int("exclude_outside", 0));
  c.exclude_outside = exclude != 0;
  ETC_ASSIGN_OR_RETURN(c.extrapolation_value, attrs.get_float("extrapolation_value", 0.0f));
  ETC_ASSIGN_OR_RETURN(c.sizes, attrs.get_ints("sizes"));
  if (attrs.has("scales")) {
    ETC_ASSIGN_OR_RETURN(c.scales, attrs.get_floats("scales"));
  }
  if (attrs.has("roi")) {
    ETC_ASSIGN_OR_RETURN(c.roi, attrs.get_floats("roi"));
  }

  const auto r = static_cast<size_t>(rank);
  ETC_CHECK_OR_FAIL(c.sizes.size() == r, Error::InvalidProgram, "sizes has ", std::to_string(c.sizes.size()),
                    " values for rank ", std::to_string(rank));
  for (int64_t s : c.sizes) ETC_CHECK_OR_FAIL(s >= 0, Error::InvalidProgram, "negative output size");
  ETC_CHECK_OR_FAIL(c.scales.empty() || c.scales.size() == r, Error::InvalidProgram, "scales has ",
                    std::to_string(c.scales.size()), " values for rank ", std::to_string(rank));
  for (float s : c.scales)
    ETC_CHECK_OR_FAIL(s > 0.0f && std::isfinite(s), Error::InvalidProgram, "scales must be positive");
  ETC_CHECK_OR_FAIL(c.roi.empty() || c.roi.size() == 2 * r, Error::InvalidProgram, "roi has ",
                    std::to_string(c.roi.size()), " values, expected ", std::to_string(2 * r));
  return c;
}

ResizeAxisParams axis_params(const ResizeConfig& c, const Shape& in, int axis) {
  ResizeAxisParams p;
  p.mode = c.mode;
  p.coord = c.coord;
  p.nearest = c.nearest;
  p.cubic_coeff_a = c.cubic_coeff_a;
  p.exclude_outside = c.exclude_outside;
  p.in_len = in[axis];
  p.out_len = c.sizes[static_cast<size_t>(axis)];
  p.scale = c.scales.empty() ? 0.0 : static_cast<double>(c.scales[static_cast<size_t>(axis)]);
  if (!c.roi.empty()) {
    p.roi_start = c.roi[static_cast<size_t>(axis)];
    p.roi_end = c.roi[static_cast<size_t>(axis) + c.sizes.size()];
  }
  return p;
}

// One axis of the plan, flattened: output index i has count[i] taps at
// off[i * kMaxResizeTaps + k] (input element offsets) with weights w[...].
template <typename Acc>
struct AxisPlan {
  std::vector<int64_t> off;
  std::vector<Acc> w;
  std::vector<uint8_t> count;
  std::vector<uint8_t> extrapolate;
  int max_count = 1;
};

template <typename Acc>
AxisPlan<Acc> make_axis_plan(const ResizeAxisParams& p, int64_t stride) {
  AxisPlan<Acc> plan;
  const auto n = static_cast<size_t>(p.out_len);
  plan.off.assign(n * kMaxResizeTaps, 0);
  plan.w.assign(n * kMaxResizeTaps, Acc(0));
  plan.count.assign(n, 0);
  plan.extrapolate.assign(n, 0);
  if (p.in_len == 0) return plan;
  const std::vector<ResizeTaps> taps = resize_axis_taps(p);
  for (size_t i = 0; i < n; ++i) {
    plan.count[i] = static_cast<uint8_t>(taps[i].count);
    plan.extrapolate[i] = taps[i].extrapolate ? 1 : 0;
    plan.max_count = std::max(plan.max_count, taps[i].count);
    for (int k = 0; k < taps[i].count; ++k) {
      plan.off[i * kMaxResizeTaps + k] = taps[i].index[k] * stride;
      plan.w[i * kMaxResizeTaps + k] = static_cast<Acc>(taps[i].weight[k]);
    }
  }
  return plan;
}

template <typename T, typename Acc>
T from_acc(Acc v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    const Acc r = std::nearbyint(v);
    if (!(r > static_cast<Acc>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (!(r < static_cast<Acc>(std::numeric_limits<T>::max()))) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  }
}

// T: element type (for nearest, any type of the element's size); Acc: the
// blending type. kNearest: every tap is a single weight-1 sample.
template <typename T, typename Acc, bool kNearest>
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const ResizeConfig& c, const Shape& in, const Shape& out, T extrapolation_value)
      : rank_(in.rank()), out_(out), extrapolation_value_(extrapolation_value) {
    int64_t stride = 1;
    for (int a = rank_ - 1; a >= 0; --a) {
      axes_.insert(axes_.begin(), make_axis_plan<Acc>(axis_params(c, in, a), stride));
      stride *= in[a];
    }
    for (int a = 0; a + 1 < rank_; ++a) max_combos_ *= axes_[static_cast<size_t>(a)].max_count;
  }

  size_t scratch_bytes() const override {
    return static_cast<size_t>(max_combos_) * (sizeof(int64_t) + sizeof(Acc));
  }

  Status run(const KernelArgs& args) override {
    const T* x = args.inputs[0]->data_as<const T>();
    T* y = args.outputs[0]->data_as<T>();
    auto* offs = static_cast<int64_t*>(args.scratch);
    Acc* ws = reinterpret_cast<Acc*>(offs + max_combos_);
    const int last = rank_ - 1;
    const int64_t out_last = out_[last];
    const int64_t rows = out_last == 0 ? 0 : out_.numel() / out_last;
    int64_t coord[kMaxRank] = {};
    for (int64_t row = 0; row < rows; ++row) {
      const int n = leading_taps(coord, offs, ws);
      T* yrow = y + row * out_last;
      if (n == 0) {
        std::fill(yrow, yrow + out_last, extrapolation_value_);
      } else {
        blend_row(x, offs, ws, n, yrow);
      }
      for (int a = last - 1; a >= 0; --a) {  // odometer over the leading output axes
        if (++coord[a] < out_[a]) break;
        coord[a] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  // Expands the taps of the leading axes at `coord` into (offset, weight)
  // combinations; returns their number, 0 when the row extrapolates.
  int leading_taps(const int64_t* coord, int64_t* offs, Acc* ws) const {
    int n = 1;
    offs[0] = 0;
    ws[0] = Acc(1);
    for (int a = 0; a + 1 < rank_; ++a) {
      const AxisPlan<Acc>& ap = axes_[static_cast<size_t>(a)];
      const auto i = static_cast<size_t>(coord[a]);
      if (ap.extrapolate[i]) return 0;
      const int c = ap.count[i];
      const int64_t* o = &ap.off[i * kMaxResizeTaps];
      const Acc* w = &ap.w[i * kMaxResizeTaps];
      for (int j = n - 1; j >= 0; --j) {  // in place: write slots j*c.. from the back
        const int64_t base = offs[j];
        const Acc bw = ws[j];
        for (int k = c - 1; k >= 0; --k) {
          offs[j * c + k] = base + o[k];
          ws[j * c + k] = bw * w[k];
        }
      }
      n *= c;
    }
    return n;
  }

  void blend_row(const T* x, const int64_t* offs, const Acc* ws, int n, T* yrow) const {
    const AxisPlan<Acc>& ap = axes_.back();
    const int64_t out_last = out_[rank_ - 1];
    for (int64_t i = 0; i < out_last; ++i) {
      if (ap.extrapolate[static_cast<size_t>(i)]) {
        yrow[i] = extrapolation_value_;
        continue;
      }
      const int64_t* o = &ap.off[static_cast<size_t>(i) * kMaxResizeTaps];
      if constexpr (kNearest) {
        yrow[i] = x[offs[0] + o[0]];
      } else {
        const Acc* w = &ap.w[static_cast<size_t>(i) * kMaxResizeTaps];
        const int c = ap.count[static_cast<size_t>(i)];
        Acc acc = Acc(0);
        for (int j = 0; j < n; ++j) {
          const T* src = x + offs[j];
          Acc s = Acc(0);
          for (int k = 0; k < c; ++k) s += w[k] * static_cast<Acc>(src[o[k]]);
          acc += ws[j] * s;
        }
        yrow[i] = from_acc<T, Acc>(acc);
      }
    }
  }

  int rank_;
  Shape out_;
  T extrapolation_value_;
  std::vector<AxisPlan<Acc>> axes_;
  int64_t max_combos_ = 1;
};

bool blendable(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int8 || t == DType::UInt8 ||
         t == DType::Int32 || t == DType::Int64;
}

Status infer_resize(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const TensorSpec& x = in[0];
  ETC_CHECK_OR_FAIL(x.shape.rank() >= 1, Error::InvalidShape, "input must have rank >= 1");
  ETC_ASSIGN_OR_RETURN(ResizeConfig c, parse_config(attrs, x.shape.rank()));
  if (c.mode == ResizeMode::Nearest) {
    ETC_CHECK_OR_FAIL(dtype_size(x.dtype) > 0, Error::InvalidType, "invalid input dtype");
  } else {
    ETC_CHECK_OR_FAIL(blendable(x.dtype), Error::InvalidType, "linear/cubic modes do not take ",
                      dtype_name(x.dtype));
  }
  Shape shape;
  for (int a = 0; a < x.shape.rank(); ++a) {
    const int64_t o = c.sizes[static_cast<size_t>(a)];
    ETC_CHECK_OR_FAIL(x.shape[a] > 0 || o == 0, Error::InvalidShape, "axis ", std::to_string(a),
                      " is empty in the input but not in the output");
    shape.push_back(o);
  }
  out[0] = TensorSpec{x.dtype, shape};
  return Status::Ok();
}

// The extrapolation value as the element's bytes, reinterpreted as U.
template <typename U>
U extrapolation_bits(DType dtype, float value) {
  U bits{};
  (void)dispatch_all(dtype, [&]<typename T>() {
    const T v = static_cast<T>(value);
    std::memcpy(&bits, &v, std::min(sizeof(T), sizeof(U)));
    return Status::Ok();
  });
  return bits;
}

template <typename U>
std::unique_ptr<Kernel> make_nearest(const ResizeConfig& c, const TensorSpec& in, const TensorSpec& out) {
  return std::make_unique<ResizeKernel<U, float, true>>(
      c, in.shape, out.shape, extrapolation_bits<U>(in.dtype, c.extrapolation_value));
}

Result<std::unique_ptr<Kernel>> create_resize(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(ResizeConfig c, parse_config(attrs, in[0].shape.rank()));
  if (c.mode == ResizeMode::Nearest) {
    switch (dtype_size(in[0].dtype)) {
      case 1: return make_nearest<uint8_t>(c, in[0], out[0]);
      case 4: return make_nearest<uint32_t>(c, in[0], out[0]);
      case 8: return make_nearest<uint64_t>(c, in[0], out[0]);
      default: return fail(Error::InvalidType, "unsupported element size");
    }
  }
  std::unique_ptr<Kernel> k;
  const float e = c.extrapolation_value;
  Status s = dispatch_arith(in[0].dtype, [&]<typename T>() {
    using Acc = std::conditional_t<std::is_same_v<T, double> || (sizeof(T) >= 4 && std::is_integral_v<T>),
                                   double, float>;
    k = std::make_unique<ResizeKernel<T, Acc, false>>(c, in[0].shape, out[0].shape, from_acc<T, Acc>(Acc(e)));
    return Status::Ok();
  });
  if (!s.ok()) return s.failure();
  return k;
}

}  // namespace

const OpDef* resize_op_def(EdgeOp op) {
  static const OpDef kResize{EdgeOp::Resize, 1, 1, 1, 1, infer_resize, create_resize};
  return op == EdgeOp::Resize ? &kResize : nullptr;
}

}  // namespace etc
