// The conv kernel. Three paths, chosen once at init:
//   pointwise  — 1x1 kernel, stride 1, no padding: the input of each group is
//                already the GEMM operand, so no im2col.
//   direct     — one input channel per group (depthwise, with or without a
//                channel multiplier): accumulates rows directly; im2col would
//                only copy the input kernel_size times for a tiny GEMM.
//   im2col     — everything else: im2col of a band of output lines into
//                scratch, then one GEMM per band and group. Bands keep the
//                column buffer near L2 size instead of materializing it whole.
// The GEMM paths work in column bands and finish each band with one output pass
// (bias add + fused clamp) while it is still in cache; the direct path starts
// each channel from its bias and clamps the channel once it is complete.
#include <algorithm>
#include <vector>

#include "runtime/kernels/portable/conv_kernels.h"

namespace etc {
namespace {

// Target size of one band: the im2col buffer, or for pointwise convs the input
// and output columns one GEMM call touches. About half of a 512 KiB L2.
constexpr int64_t kBandBytes = int64_t{1} << 18;
// Each GEMM call packs the whole weight matrix once, so a band keeps at least
// this many columns to amortize that over enough work (deep layers have large
// weights and few columns).
constexpr int64_t kMinBandColumns = 512;

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
    const int64_t min_lines = (kMinBandColumns + g.out[2] - 1) / g.out[2];
    band_lines_ = std::min(lines, std::max(kBandBytes / line_bytes, min_lines));
    const int64_t column_bytes = (rows_ + out_per_group_) * static_cast<int64_t>(sizeof(T));
    band_cols_ = std::min(g.out_size(), std::max(kBandBytes / column_bytes / 64 * 64, kMinBandColumns));
    // Per kernel column: input offset and the valid output range of each tap.
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
      const int64_t off = kw * g.dilation[2] - g.pad_begin[2];
      int64_t lo = 0, hi = 0;
      valid_output_range(off, g.stride[2], g.in[2], g.out[2], &lo, &hi);
      taps_.push_back({off, lo, hi});
    }
    if (taps_.size() == 3) {
      fused_lo_ = std::max({taps_[0].lo, taps_[1].lo, taps_[2].lo});
      fused_hi_ = std::max(fused_lo_, std::min({taps_[0].hi, taps_[1].hi, taps_[2].hi}));
    }
  }

  size_t scratch_bytes() const override {
    if (mode_ != Mode::Im2col) return 0;
    return static_cast<size_t>(rows_ * band_lines_ * p_.g.out[2]) * sizeof(T);
  }

  Status run(const KernelArgs& args) override {
    const ConvOperands<T> op = conv_operands<T>(p_, args);
    for (int64_t n = 0; n < p_.batch; ++n) {
      if (mode_ == Mode::Direct) {
        run_direct(op.x_image(n), op.w, op.bias, op.y_image(n));
        continue;
      }
      for (int64_t grp = 0; grp < p_.group; ++grp) {
        run_group(op.x_group(n, grp), op.w + grp * out_per_group_ * rows_,
                  op.bias ? op.bias + grp * out_per_group_ : nullptr, op.col, op.y_group(n, grp));
      }
    }
    return Status::Ok();
  }

 private:
  enum class Mode { Pointwise, Direct, Im2col };
  struct Tap {
    int64_t offset, lo, hi;
  };

  // y[out_per_group, out_size] = clamp(w[out_per_group, rows] * im2col(x) + bias).
  void run_group(const T* x, const T* w, const T* bias, T* col, T* y) const {
    const int64_t out_size = p_.g.out_size();
    if (mode_ == Mode::Pointwise) {
      for (int64_t begin = 0; begin < out_size; begin += band_cols_) {
        const int64_t cols = std::min(band_cols_, out_size - begin);
        gemm_typed(false, false, out_per_group_, cols, rows_, w, rows_, x + begin, out_size, T(0), y + begin,
                   out_size);
        bias_clamp_rows(y + begin, out_per_group_, cols, out_size, bias, p_.clamp);
      }
      return;
    }
    const int64_t width = p_.g.out[2];
    const int64_t lines = p_.g.out[0] * p_.g.out[1];
    for (int64_t begin = 0; begin < lines; begin += band_lines_) {
      const int64_t end = std::min(lines, begin + band_lines_);
      const int64_t cols = (end - begin) * width;
      im2col(p_.g, x, in_per_group_, begin, end, col);
      gemm_typed(false, false, out_per_group_, cols, rows_, w, rows_, col, cols, T(0), y + begin * width,
                 out_size);
      bias_clamp_rows(y + begin * width, out_per_group_, cols, out_size, bias, p_.clamp);
    }
  }

  // One input channel per group: output channel m reads input channel m / multiplier.
  void run_direct(const T* x, const T* w, const T* bias, T* y) const {
    const WindowGeometry& g = p_.g;
    const int64_t out_size = g.out_size();
    const int64_t width = g.out[2];
    const int64_t lines = g.out[0] * g.out[1];
    for (int64_t m = 0; m < p_.out_channels; ++m) {
      const T* xc = x + (m / out_per_group_) * g.in_size();
      const T* wm = w + m * g.kernel_size();
      T* ym = y + m * out_size;
      std::fill(ym, ym + out_size, bias ? bias[m] : T(0));
      for (int64_t line = 0; line < lines; ++line) direct_line(xc, wm, line, ym + line * width);
      bias_clamp_rows<T>(ym, 1, out_size, out_size, nullptr, p_.clamp);
    }
  }

  // Adds the contribution of every valid kernel row to one output line. A 3x3
  // window whose three rows are all valid takes one pass over the line.
  void direct_line(const T* xc, const T* wm, int64_t line, T* yrow) const {
    const WindowGeometry& g = p_.g;
    const bool three_rows = taps_.size() == 3 && g.kernel[0] * g.kernel[1] == 3;
    const T* xrows[3] = {};
    const T* wrows[3] = {};
    int count = 0;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t id = (line / g.out[1]) * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t ih = (line % g.out[1]) * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        const T* xrow = xc + (id * g.in[1] + ih) * g.in[2];
        const T* wrow = wm + (kd * g.kernel[1] + kh) * g.kernel[2];
        if (three_rows) {
          xrows[count] = xrow;
          wrows[count++] = wrow;
        } else {
          accumulate_row(xrow, wrow, yrow);
        }
      }
    }
    if (count == 3) {
      accumulate_rows3(xrows, wrows, yrow);
      for (int r = 0; r < 3; ++r) accumulate_edges(xrows[r], wrows[r], yrow);
    } else {
      for (int r = 0; r < count; ++r) accumulate_row(xrows[r], wrows[r], yrow);
    }
  }

  // yrow[o] += sum over taps of w[kw] * xrow[offset(kw) + o * s]. Three-tap rows (the
  // common 3x3 depthwise) take one fused pass over the range where every tap is valid.
  void accumulate_row(const T* xrow, const T* w, T* yrow) const {
    if (fused_hi_ > fused_lo_) {
      const int64_t s = p_.g.stride[2];
      const T w0 = w[0], w1 = w[1], w2 = w[2];
      const T* x0 = xrow + taps_[0].offset + fused_lo_ * s;
      const T* x1 = xrow + taps_[1].offset + fused_lo_ * s;
      const T* x2 = xrow + taps_[2].offset + fused_lo_ * s;
      T* y = yrow + fused_lo_;
      const int64_t n = fused_hi_ - fused_lo_;
      if (s == 1) {
        for (int64_t o = 0; o < n; ++o) y[o] += w0 * x0[o] + w1 * x1[o] + w2 * x2[o];
      } else {
        for (int64_t o = 0; o < n; ++o) y[o] += w0 * x0[o * s] + w1 * x1[o * s] + w2 * x2[o * s];
      }
    }
    accumulate_edges(xrow, w, yrow);
  }

  // accumulate_row's fused range for three kernel rows at once: each output is
  // read and written once instead of three times.
  void accumulate_rows3(const T* const* xrows, const T* const* wrows, T* yrow) const {
    if (fused_hi_ <= fused_lo_) return;
    const int64_t s = p_.g.stride[2];
    const T* x[9];
    T w[9];
    for (int r = 0; r < 3; ++r) {
      for (int t = 0; t < 3; ++t) {
        x[r * 3 + t] = xrows[r] + taps_[t].offset + fused_lo_ * s;
        w[r * 3 + t] = wrows[r][t];
      }
    }
    T* y = yrow + fused_lo_;
    const int64_t n = fused_hi_ - fused_lo_;
    if (s == 1) {
      for (int64_t o = 0; o < n; ++o) {
        y[o] += w[0] * x[0][o] + w[1] * x[1][o] + w[2] * x[2][o] + w[3] * x[3][o] + w[4] * x[4][o] +
                w[5] * x[5][o] + w[6] * x[6][o] + w[7] * x[7][o] + w[8] * x[8][o];
      }
    } else {
      for (int64_t o = 0; o < n; ++o) {
        const int64_t i = o * s;
        y[o] += w[0] * x[0][i] + w[1] * x[1][i] + w[2] * x[2][i] + w[3] * x[3][i] + w[4] * x[4][i] +
                w[5] * x[5][i] + w[6] * x[6][i] + w[7] * x[7][i] + w[8] * x[8][i];
      }
    }
  }

  // The positions outside the fused range (all of them for other widths), one tap at a time.
  void accumulate_edges(const T* xrow, const T* w, T* yrow) const {
    const int64_t s = p_.g.stride[2];
    for (size_t kw = 0; kw < taps_.size(); ++kw) {
      const T wv = w[kw];
      const Tap& t = taps_[kw];
      const int64_t split_lo = std::min(t.hi, fused_lo_), split_hi = std::max(t.lo, fused_hi_);
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
  int64_t band_cols_ = 1;   // output columns per pointwise GEMM call
  std::vector<Tap> taps_;
  // Output positions where all three taps of a 3-wide kernel are valid (empty otherwise).
  int64_t fused_lo_ = 0, fused_hi_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_kernel(DType dtype, const ConvParams& p) {
  if (dtype == DType::Float64) return std::make_unique<ConvKernel<double>>(p);
  return std::make_unique<ConvKernel<float>>(p);
}

}  // namespace etc
