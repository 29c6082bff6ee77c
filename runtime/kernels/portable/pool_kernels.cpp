// max_pool and avg_pool kernels. For each spatial dim and output index, init
// computes the window start and the range of kernel taps that land inside the
// input; run() then walks each window with pointer steps only.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "runtime/kernels/portable/pool_window.h"

namespace etc {
namespace {

struct TapRange {
  int64_t start = 0;   // input coordinate of tap 0 (may be negative)
  int64_t lo = 0;      // first tap inside the input
  int64_t hi = 0;      // one past the last tap inside the input
  int64_t padded = 0;  // taps inside the padded input (count_include_pad divisor)
};

std::vector<TapRange> tap_ranges(const WindowGeometry& g, int i) {
  std::vector<TapRange> r(static_cast<size_t>(g.out[i]));
  const int64_t k = g.kernel[i], d = g.dilation[i], in = g.in[i];
  for (int64_t o = 0; o < g.out[i]; ++o) {
    TapRange& t = r[static_cast<size_t>(o)];
    t.start = o * g.stride[i] - g.pad_begin[i];
    t.lo = std::min(k, t.start >= 0 ? 0 : (-t.start + d - 1) / d);
    t.hi = std::max(t.lo, t.start >= in ? 0 : std::min(k, (in - 1 - t.start) / d + 1));
    const int64_t room = in + g.pad_end[i] - t.start;
    t.padded = room <= 0 ? 0 : std::min(k, (room + d - 1) / d);
  }
  return r;
}

class PoolKernelBase : public Kernel {
 protected:
  explicit PoolKernelBase(const PoolParams& p) : p_(p) {
    for (int i = 0; i < kMaxSpatialRank; ++i) ranges_[i] = tap_ranges(p.g, i);
  }

  // Calls f(xp, yp, plane, range_d, range_h, range_w, o) for every output
  // position o of every plane, xp and yp being that plane of x and y.
  template <typename T, typename F>
  void for_each_window(const KernelArgs& args, F&& f) const {
    const T* x = args.inputs[0]->data_as<const T>();
    T* y = args.outputs[0]->data_as<T>();
    const int64_t in_size = p_.g.in_size(), out_size = p_.g.out_size();
    for (int64_t plane = 0; plane < p_.batch * p_.channels; ++plane) {
      const T* xp = x + plane * in_size;
      T* yp = y + plane * out_size;
      int64_t o = 0;
      for (const TapRange& rd : ranges_[0])
        for (const TapRange& rh : ranges_[1])
          for (const TapRange& rw : ranges_[2]) f(xp, yp, plane, rd, rh, rw, o++);
    }
  }

  static bool empty(const TapRange& rd, const TapRange& rh, const TapRange& rw) {
    return rd.lo == rd.hi || rh.lo == rh.hi || rw.lo == rw.hi;
  }

  // The first tap of a non-empty window inside the input.
  template <typename T>
  const T* first_tap(const T* xp, const TapRange& rd, const TapRange& rh, const TapRange& rw) const {
    const WindowGeometry& g = p_.g;
    return xp + ((rd.start + rd.lo * g.dilation[0]) * g.in[1] + rh.start + rh.lo * g.dilation[1]) * g.in[2] +
           rw.start + rw.lo * g.dilation[2];
  }

  // Calls v(p) for every tap p of a non-empty window that lies inside the input.
  template <typename T, typename V>
  void for_each_tap(const T* xp, const TapRange& rd, const TapRange& rh, const TapRange& rw, V&& v) const {
    const WindowGeometry& g = p_.g;
    const int64_t sd = g.dilation[0] * g.in[1] * g.in[2], sh = g.dilation[1] * g.in[2], sw = g.dilation[2];
    const T* first = first_tap(xp, rd, rh, rw);
    for (int64_t kd = rd.lo; kd < rd.hi; ++kd, first += sd) {
      const T* row = first;
      for (int64_t kh = rh.lo; kh < rh.hi; ++kh, row += sh) {
        const T* p = row;
        for (int64_t kw = rw.lo; kw < rw.hi; ++kw, p += sw) v(p);
      }
    }
  }

  PoolParams p_;
  std::array<std::vector<TapRange>, kMaxSpatialRank> ranges_;
};

template <typename T>
class MaxPoolKernel final : public PoolKernelBase {
 public:
  explicit MaxPoolKernel(const PoolParams& p) : PoolKernelBase(p) {
    // Flat-index strides of the input dims, row- or column-major (storage_order).
    const WindowGeometry& g = p.g;
    index_strides_ = {g.in[1] * g.in[2], g.in[2], 1};
    if (p.column_major_indices) {
      int64_t acc = 1;
      for (int i = kMaxSpatialRank - g.rank; i < kMaxSpatialRank; ++i) {
        index_strides_[i] = acc;
        acc *= g.in[i];
      }
    }
  }

  Status run(const KernelArgs& args) override {
    int64_t* indices = p_.with_indices ? args.outputs[1]->data_as<int64_t>() : nullptr;
    const int64_t in_size = p_.g.in_size(), out_size = p_.g.out_size();
    for_each_window<T>(args, [&](const T* xp, T* yp, int64_t plane, const TapRange& rd, const TapRange& rh,
                                 const TapRange& rw, int64_t o) {
      if (empty(rd, rh, rw)) {
        yp[o] = T(0);
        if (indices) indices[plane * out_size + o] = 0;
        return;
      }
      const T* best_ptr = first_tap(xp, rd, rh, rw);
      T best = *best_ptr;
      for_each_tap(xp, rd, rh, rw, [&](const T* p) {
        if (*p > best) {
          best = *p;
          best_ptr = p;
        }
      });
      yp[o] = best;
      if (indices) indices[plane * out_size + o] = plane * in_size + flat_index(best_ptr - xp);
    });
    return Status::Ok();
  }

 private:
  // Converts a row-major offset inside a plane to the requested storage order.
  int64_t flat_index(int64_t offset) const {
    if (!p_.column_major_indices) return offset;
    const WindowGeometry& g = p_.g;
    const int64_t w = offset % g.in[2], h = (offset / g.in[2]) % g.in[1], d = offset / (g.in[1] * g.in[2]);
    return d * index_strides_[0] + h * index_strides_[1] + w * index_strides_[2];
  }

  std::array<int64_t, kMaxSpatialRank> index_strides_{};
};

template <typename T>
class AvgPoolKernel final : public PoolKernelBase {
 public:
  explicit AvgPoolKernel(const PoolParams& p) : PoolKernelBase(p) {}

  Status run(const KernelArgs& args) override {
    for_each_window<T>(args, [&](const T* xp, T* yp, int64_t, const TapRange& rd, const TapRange& rh,
                                 const TapRange& rw, int64_t o) {
      const int64_t count = p_.count_include_pad ? rd.padded * rh.padded * rw.padded
                                                 : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
      if (count == 0 || empty(rd, rh, rw)) {
        yp[o] = T(0);
        return;
      }
      // In double: a float running sum over a large window (a global pool
      // of 160x160 pixels) drifts by 1e-5 relative.
      double sum = 0;
      for_each_tap(xp, rd, rh, rw, [&](const T* p) { sum += *p; });
      yp[o] = static_cast<T>(sum / static_cast<double>(count));
    });
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Kernel> make_max_pool_kernel(DType dtype, const PoolParams& p) {
  switch (dtype) {
    case DType::Float64: return std::make_unique<MaxPoolKernel<double>>(p);
    case DType::Int8: return std::make_unique<MaxPoolKernel<int8_t>>(p);
    case DType::UInt8: return std::make_unique<MaxPoolKernel<uint8_t>>(p);
    default: return std::make_unique<MaxPoolKernel<float>>(p);
  }
}

std::unique_ptr<Kernel> make_avg_pool_kernel(DType dtype, const PoolParams& p) {
  if (dtype == DType::Float64) return std::make_unique<AvgPoolKernel<double>>(p);
  return std::make_unique<AvgPoolKernel<float>>(p);
}

}  // namespace etc
