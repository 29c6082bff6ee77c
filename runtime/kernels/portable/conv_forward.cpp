// The conv kernel. Three paths, chosen once at init:
//   pointwise  — 1x1 kernel, stride 1, no padding: the input of each group is
//                already the GEMM operand, so no im2col.
//   direct     — one input channel per group (depthwise, with or without a
//                channel multiplier): accumulates rows directly; im2col would
//                only copy the input kernel_size times for a tiny GEMM.
//   im2col     — everything else: im2col of a band of output lines into
//                scratch, then one GEMM per band and group. Bands keep the
//                column buffer near L2 size instead of materializing it whole.
// The bias is written into the output first and the GEMMs accumulate onto it.
#include <algorithm>
#include <vector>

#include "runtime/kernels/portable/conv_kernels.h"

namespace etc {
namespace {

// Target size of one im2col band.
constexpr int64_t kBandBytes = int64_t{1} << 20;

template <typename T>
class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const ConvParams& p) : p_(p) {
    const WindowGeometry& g = p.g;
    in_per_group_ = p.in_channels / p.group;
    out_per_group_ = p.out_channels / p.group;
    rows_ = in_per_group_ * g.kernel_size();
    bool unit = g.kernel_size() == 1;
    for (int i = 0; i < kMaxSpatialRank; ++i)
      unit = unit && g.stride[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
    mode_ = unit ? Mode::Pointwise : (p.group > 1 && in_per_group_ == 1 ? Mode::Direct : Mode::Im2col);
    const int64_t lines = g.out[0] * g.out[1];
    const int64_t line_bytes = rows_ * g.out[2] * static_cast<int64_t>(sizeof(T));
    band_lines_ = std::clamp<int64_t>(kBandBytes / line_bytes, 1, lines);
    // Per kernel column: input offset and the valid output range of each tap.
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
      const int64_t off = kw * g.dilation[2] - g.pad_begin[2];
      int64_t lo = 0, hi = 0;
      valid_output_range(off, g.stride[2], g.in[2], g.out[2], &lo, &hi);
      taps_.push_back({off, lo, hi});
    }
  }

  size_t scratch_bytes() const override {
    if (mode_ != Mode::Im2col) return 0;
    return static_cast<size_t>(rows_ * band_lines_ * p_.g.out[2]) * sizeof(T);
  }

  Status run(const KernelArgs& args) override {
    const T* x = args.inputs[0]->data_as<const T>();
    const T* w = args.inputs[1]->data_as<const T>();
    const T* bias = p_.has_bias ? args.inputs[2]->data_as<const T>() : nullptr;
    T* y = args.outputs[0]->data_as<T>();
    T* col = static_cast<T*>(args.scratch);
    const int64_t in_size = p_.g.in_size();
    const int64_t out_size = p_.g.out_size();
    for (int64_t n = 0; n < p_.batch; ++n) {
      const T* xn = x + n * p_.in_channels * in_size;
      T* yn = y + n * p_.out_channels * out_size;
      if (bias) fill_bias(bias, p_.out_channels, out_size, yn);
      if (mode_ == Mode::Direct) {
        run_direct(xn, w, bias != nullptr, yn);
        continue;
      }
      for (int64_t grp = 0; grp < p_.group; ++grp) {
        run_group(xn + grp * in_per_group_ * in_size, w + grp * out_per_group_ * rows_, bias ? T(1) : T(0),
                  col, yn + grp * out_per_group_ * out_size);
      }
    }
    return Status::Ok();
  }

 private:
  enum class Mode { Pointwise, Direct, Im2col };
  struct Tap {
    int64_t offset, lo, hi;
  };

  // y[out_per_group, out_size] = w[out_per_group, rows] * im2col(x) + beta * y.
  void run_group(const T* x, const T* w, T beta, T* col, T* y) const {
    const int64_t out_size = p_.g.out_size();
    if (mode_ == Mode::Pointwise) {
      gemm_typed(false, false, out_per_group_, out_size, rows_, w, rows_, x, out_size, beta, y, out_size);
      return;
    }
    const int64_t width = p_.g.out[2];
    const int64_t lines = p_.g.out[0] * p_.g.out[1];
    for (int64_t begin = 0; begin < lines; begin += band_lines_) {
      const int64_t end = std::min(lines, begin + band_lines_);
      const int64_t cols = (end - begin) * width;
      im2col(p_.g, x, in_per_group_, begin, end, col);
      gemm_typed(false, false, out_per_group_, cols, rows_, w, rows_, col, cols, beta, y + begin * width,
                 out_size);
    }
  }

  // One input channel per group: output channel m reads input channel m / multiplier.
  void run_direct(const T* x, const T* w, bool has_bias, T* y) const {
    const WindowGeometry& g = p_.g;
    const int64_t out_size = g.out_size();
    const int64_t width = g.out[2];
    const int64_t s = g.stride[2];
    for (int64_t m = 0; m < p_.out_channels; ++m) {
      const T* xc = x + (m / out_per_group_) * g.in_size();
      const T* wm = w + m * g.kernel_size();
      T* ym = y + m * out_size;
      if (!has_bias) std::fill(ym, ym + out_size, T(0));
      for (int64_t line = 0; line < g.out[0] * g.out[1]; ++line) {
        T* yrow = ym + line * width;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          const int64_t id = (line / g.out[1]) * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            const int64_t ih = (line % g.out[1]) * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const T* xrow = xc + (id * g.in[1] + ih) * g.in[2];
            const T* wrow = wm + (kd * g.kernel[1] + kh) * g.kernel[2];
            accumulate_row(xrow, wrow, s, yrow);
          }
        }
      }
    }
  }

  // yrow[o] += sum over taps of w[kw] * xrow[offset(kw) + o * s]. Three-tap rows (the
  // common 3x3 depthwise) take one fused pass over the range where every tap is valid.
  void accumulate_row(const T* xrow, const T* w, int64_t s, T* yrow) const {
    int64_t fused_lo = 0, fused_hi = 0;
    if (taps_.size() == 3) {
      fused_lo = std::max({taps_[0].lo, taps_[1].lo, taps_[2].lo});
      fused_hi = std::max(fused_lo, std::min({taps_[0].hi, taps_[1].hi, taps_[2].hi}));
    }
    if (fused_hi > fused_lo) {
      const T w0 = w[0], w1 = w[1], w2 = w[2];
      const T* x0 = xrow + taps_[0].offset + fused_lo * s;
      const T* x1 = xrow + taps_[1].offset + fused_lo * s;
      const T* x2 = xrow + taps_[2].offset + fused_lo * s;
      T* y = yrow + fused_lo;
      const int64_t n = fused_hi - fused_lo;
      if (s == 1) {
        for (int64_t o = 0; o < n; ++o) y[o] += w0 * x0[o] + w1 * x1[o] + w2 * x2[o];
      } else {
        for (int64_t o = 0; o < n; ++o) y[o] += w0 * x0[o * s] + w1 * x1[o * s] + w2 * x2[o * s];
      }
    }
    // The positions outside the fused range (all of them for other widths), one tap at a time.
    for (size_t kw = 0; kw < taps_.size(); ++kw) {
      const T wv = w[kw];
      const Tap& t = taps_[kw];
      const int64_t split_lo = std::min(t.hi, fused_lo), split_hi = std::max(t.lo, fused_hi);
      for (int64_t o = t.lo; o < split_lo; ++o) yrow[o] += wv * xrow[t.offset + o * s];
      for (int64_t o = split_hi; o < t.hi; ++o) yrow[o] += wv * xrow[t.offset + o * s];
    }
  }

  ConvParams p_;
  Mode mode_ = Mode::Im2col;
  int64_t in_per_group_ = 1;
  int64_t out_per_group_ = 1;
  int64_t rows_ = 1;        // GEMM depth: input channels per group * kernel size
  int64_t band_lines_ = 1;  // output lines per im2col band
  std::vector<Tap> taps_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_kernel(DType dtype, const ConvParams& p) {
  if (dtype == DType::Float64) return std::make_unique<ConvKernel<double>>(p);
  return std::make_unique<ConvKernel<float>>(p);
}

}  // namespace etc
