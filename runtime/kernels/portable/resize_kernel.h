#pragma once
// Shared pieces of the resize kernels (resize.cpp: plan built at init from
// the attributes; resize_runtime.cpp: plan built per run from scales, sizes or
// roi read at run time). Both hand per-axis taps to resize_blend(), which only
// gathers and blends.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/resize_plan.h"

namespace etc {

// The attributes of a resize node (edge_ops.def), validated.
struct ResizeConfig : ResizeSampling {
  float extrapolation_value = 0.0f;
  std::vector<int64_t> sizes;
  std::vector<float> scales;  // empty: out / in
  std::vector<float> roi;     // empty: whole input
};

// Edge inputs of resize after x; each optional, read at run time when present.
inline constexpr int kResizeScalesInput = 1;  // float32 [rank]
inline constexpr int kResizeSizesInput = 2;   // int64 [rank]
inline constexpr int kResizeRoiInput = 3;     // float32 or float64 [2 * rank]

// One axis of the plan, flattened: output index i has count[i] taps at
// off[i * kMaxResizeTaps + k] (input element offsets) with weights w[...].
// The arrays live in the kernel (init-time plan) or in scratch (run-time plan).
template <typename Acc>
struct AxisPlanView {
  const int64_t* off = nullptr;
  const Acc* w = nullptr;
  const uint8_t* count = nullptr;
  const uint8_t* extrapolate = nullptr;
};

// Writes the taps of one axis (output length p.out_len) into the given arrays.
// Returns the largest tap count. Does not allocate.
template <typename Acc>
int fill_axis_plan(const ResizeAxisParams& p, int64_t stride, int64_t* off, Acc* w, uint8_t* count,
                   uint8_t* extrapolate) {
  int max_count = 1;
  for (int64_t i = 0; i < p.out_len; ++i) {
    const ResizeTaps taps = resize_taps_at(p, i);
    const auto base = static_cast<size_t>(i) * kMaxResizeTaps;
    count[i] = static_cast<uint8_t>(taps.count);
    extrapolate[i] = taps.extrapolate ? 1 : 0;
    max_count = std::max(max_count, taps.count);
    for (int k = 0; k < kMaxResizeTaps; ++k) {
      off[base + k] = k < taps.count ? taps.index[k] * stride : 0;
      w[base + k] = k < taps.count ? static_cast<Acc>(taps.weight[k]) : Acc(0);
    }
  }
  return max_count;
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

// Expands the taps of the leading axes at `coord` into (offset, weight)
// combinations in offs / ws; returns their number, 0 when the row extrapolates.
template <typename Acc>
int resize_leading_taps(const AxisPlanView<Acc>* axes, int rank, const int64_t* coord, int64_t* offs,
                        Acc* ws) {
  int n = 1;
  offs[0] = 0;
  ws[0] = Acc(1);
  for (int a = 0; a + 1 < rank; ++a) {
    const AxisPlanView<Acc>& ap = axes[a];
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

// T: element type (for nearest, any type of the element's size); Acc: the
// blending type. kNearest: every tap is a single weight-1 sample.
template <typename T, typename Acc, bool kNearest>
void resize_blend_row(const AxisPlanView<Acc>& ap, int64_t out_last, const T* x, const int64_t* offs,
                      const Acc* ws, int n, T extrapolation_value, T* yrow) {
  for (int64_t i = 0; i < out_last; ++i) {
    const auto si = static_cast<size_t>(i);
    if (ap.extrapolate[si]) {
      yrow[i] = extrapolation_value;
      continue;
    }
    const int64_t* o = &ap.off[si * kMaxResizeTaps];
    if constexpr (kNearest) {
      yrow[i] = x[offs[0] + o[0]];
    } else {
      const Acc* w = &ap.w[si * kMaxResizeTaps];
      const int c = ap.count[si];
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

// Resamples x into y (shape `out`) following the per-axis plans. offs / ws
// hold at least the product of the leading axes' tap counts.
template <typename T, typename Acc, bool kNearest>
void resize_blend(const AxisPlanView<Acc>* axes, const Shape& out, const T* x, T* y, T extrapolation_value,
                  int64_t* offs, Acc* ws) {
  const int rank = out.rank();
  const int last = rank - 1;
  const int64_t out_last = out[last];
  const int64_t rows = out_last == 0 ? 0 : out.numel() / out_last;
  int64_t coord[kMaxRank] = {};
  for (int64_t row = 0; row < rows; ++row) {
    const int n = resize_leading_taps<Acc>(axes, rank, coord, offs, ws);
    T* yrow = y + row * out_last;
    if (n == 0) {
      std::fill(yrow, yrow + out_last, extrapolation_value);
    } else {
      resize_blend_row<T, Acc, kNearest>(axes[last], out_last, x, offs, ws, n, extrapolation_value, yrow);
    }
    for (int a = last - 1; a >= 0; --a) {  // odometer over the leading output axes
      if (++coord[a] < out[a]) break;
      coord[a] = 0;
    }
  }
}

// Parameters of one axis from the attributes alone.
ResizeAxisParams resize_axis_params(const ResizeConfig& c, const Shape& in, int axis);

// The extrapolation value as the element's bytes, reinterpreted as U.
template <typename U>
U resize_extrapolation_bits(DType dtype, float value) {
  U bits{};
  (void)dispatch_all(dtype, [&]<typename T>() {
    const T v = static_cast<T>(value);
    std::memcpy(&bits, &v, std::min(sizeof(T), sizeof(U)));
    return Status::Ok();
  });
  return bits;
}

// Instantiates K<T, Acc, kNearest>(config, in, out, extrapolation value) for
// the input dtype: nearest works on raw element bits; linear and cubic blend
// in float, or double for double and wide integers.
template <template <typename, typename, bool> class K>
Result<std::unique_ptr<Kernel>> make_resize_kernel(const ResizeConfig& c, const TensorSpec& in,
                                                   const TensorSpec& out) {
  if (c.mode == ResizeMode::Nearest) {
    const float e = c.extrapolation_value;
    switch (dtype_size(in.dtype)) {
      case 1:
        return std::unique_ptr<Kernel>(std::make_unique<K<uint8_t, float, true>>(
            c, in.shape, out.shape, resize_extrapolation_bits<uint8_t>(in.dtype, e)));
      case 4:
        return std::unique_ptr<Kernel>(std::make_unique<K<uint32_t, float, true>>(
            c, in.shape, out.shape, resize_extrapolation_bits<uint32_t>(in.dtype, e)));
      case 8:
        return std::unique_ptr<Kernel>(std::make_unique<K<uint64_t, float, true>>(
            c, in.shape, out.shape, resize_extrapolation_bits<uint64_t>(in.dtype, e)));
      default: return fail(Error::InvalidType, "unsupported element size");
    }
  }
  std::unique_ptr<Kernel> k;
  Status s = dispatch_arith(in.dtype, [&]<typename T>() {
    using Acc = std::conditional_t<std::is_same_v<T, double> || (sizeof(T) >= 4 && std::is_integral_v<T>),
                                   double, float>;
    k = std::make_unique<K<T, Acc, false>>(c, in.shape, out.shape,
                                           from_acc<T, Acc>(Acc(c.extrapolation_value)));
    return Status::Ok();
  });
  if (!s.ok()) return s.failure();
  return k;
}

// The kernel for a resize node with run-time scales, sizes or roi inputs.
Result<std::unique_ptr<Kernel>> create_runtime_resize(const ResizeConfig& c, const TensorSpec& in,
                                                      const TensorSpec& out);

}  // namespace etc
