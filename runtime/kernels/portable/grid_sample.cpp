// grid_sample: X [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x then y,
// normalized to [-1, 1]) into [N, C, Ho, Wo], as the ONNX reference does:
// a point is denormalized (align_corners: -1 and 1 are the corner pixels'
// centres, else their outer edges), then, outside the border (the corner
// centres with align_corners, else the edges), clamped into the image
// (padding_mode border; not in cubic mode) or reflected off it
// (reflection); nearest rounds it half to even; the linear and cubic modes
// interpolate the 2x2 or 4x4 pixels around it, each pixel outside the
// image 0 (zeros), clamped (border) or reflected (reflection). Cubic uses
// A = -0.75. Checked against PyTorch and ONNX Runtime
// (tests/cli/test_operators_vs_torch.py) and the ONNX conformance tests.
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/dispatch.h"

namespace etc {
namespace {

enum class Mode { kLinear, kNearest, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Params {
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// Reflects x off the near border until it lies within [lo, hi].
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double d = lo - x;
    const auto n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi;
    const auto n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

// One image plane [h, w] and the rules for points and pixels outside it.
template <typename T>
struct Plane {
  const T* data;
  int64_t h, w;
  Params p;

  double lo(int64_t) const { return p.align_corners ? 0.0 : -0.5; }
  double hi(int64_t n) const {
    return p.align_corners ? static_cast<double>(n - 1) : static_cast<double>(n) - 0.5;
  }

  // A denormalized coordinate along a dim of n pixels, brought inside the
  // border as the padding mode says.
  double inside(double v, int64_t n) const {
    if (v >= lo(n) && v <= hi(n)) return v;
    // Cubic leaves the point where it is and clamps each of its 16 pixels
    // (as PyTorch and ONNX Runtime do; clamping the point first would move
    // the 4x4 window).
    if (p.padding == Padding::kBorder)
      return p.mode == Mode::kCubic ? v : std::fmin(std::fmax(v, 0.0), static_cast<double>(n - 1));
    if (p.padding == Padding::kReflection) return reflect(v, lo(n), hi(n));
    return v;
  }

  double pixel(int64_t r, int64_t c) const {
    if (p.padding == Padding::kZeros) {
      if (r < 0 || r >= h || c < 0 || c >= w) return 0.0;
    } else if (p.padding == Padding::kBorder) {
      r = std::min(std::max<int64_t>(r, 0), h - 1);
      c = std::min(std::max<int64_t>(c, 0), w - 1);
    } else {
      r = static_cast<int64_t>(reflect(static_cast<double>(r), lo(h), hi(h)));
      c = static_cast<int64_t>(reflect(static_cast<double>(c), lo(w), hi(w)));
      // Reflection off the edges (-0.5, n - 0.5) can land on -0 or n - 0.5
      // truncated: keep the index inside.
      r = std::min(std::max<int64_t>(r, 0), h - 1);
      c = std::min(std::max<int64_t>(c, 0), w - 1);
    }
    return static_cast<double>(data[r * w + c]);
  }
};

std::array<double, 4> cubic_coefficients(double t) {
  constexpr double a = -0.75;
  const double x = std::fabs(t);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a, ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

template <typename T>
double sample(const Plane<T>& plane, double x, double y) {
  switch (plane.p.mode) {
    case Mode::kNearest:
      return plane.pixel(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
    case Mode::kLinear: {
      const double x0 = std::floor(x), y0 = std::floor(y);
      const double dx = x - x0, dy = y - y0;
      const auto c = static_cast<int64_t>(x0), r = static_cast<int64_t>(y0);
      return (1 - dy) * ((1 - dx) * plane.pixel(r, c) + dx * plane.pixel(r, c + 1)) +
             dy * ((1 - dx) * plane.pixel(r + 1, c) + dx * plane.pixel(r + 1, c + 1));
    }
    case Mode::kCubic: {
      const double x0 = std::floor(x), y0 = std::floor(y);
      const std::array<double, 4> cx = cubic_coefficients(x - x0), cy = cubic_coefficients(y - y0);
      const auto c = static_cast<int64_t>(x0) - 1, r = static_cast<int64_t>(y0) - 1;
      double sum = 0;
      for (int i = 0; i < 4; ++i) {
        double row = 0;
        for (int j = 0; j < 4; ++j) row += cx[static_cast<size_t>(j)] * plane.pixel(r + i, c + j);
        sum += cy[static_cast<size_t>(i)] * row;
      }
      return sum;
    }
  }
  return 0;
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(DType dtype, Params p) : dtype_(dtype), p_(p) {}

  Status run(const KernelArgs& args) override {
    return dispatch_float(dtype_, [&]<typename T>() {
      const Tensor& x = *args.inputs[0];
      const Tensor& grid = *args.inputs[1];
      const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
      const int64_t ho = grid.shape()[1], wo = grid.shape()[2];
      const T* xd = x.data_as<const T>();
      const T* g = grid.data_as<const T>();
      T* y = args.outputs[0]->data_as<T>();
      const auto denormalize = [&](double v, int64_t len) {
        return p_.align_corners ? (v + 1) / 2 * static_cast<double>(len - 1)
                                : ((v + 1) * static_cast<double>(len) - 1) / 2;
      };
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
          const Plane<T> plane{xd + (b * c + ch) * h * w, h, w, p_};
          for (int64_t i = 0; i < ho * wo; ++i) {
            const T* point = g + (b * ho * wo + i) * 2;
            double px = denormalize(static_cast<double>(point[0]), w);
            double py = denormalize(static_cast<double>(point[1]), h);
            if (p_.mode == Mode::kNearest) px = std::nearbyint(px), py = std::nearbyint(py);
            px = plane.inside(px, w);
            py = plane.inside(py, h);
            y[(b * c + ch) * ho * wo + i] = static_cast<T>(sample(plane, px, py));
          }
        }
      return Status::Ok();
    });
  }

 private:
  DType dtype_;
  Params p_;
};

Result<Params> read_params(const AttrList& attrs) {
  Params p;
  ETC_ASSIGN_OR_RETURN(std::string_view mode, attrs.get_string("mode", "linear"));
  ETC_ASSIGN_OR_RETURN(std::string_view padding, attrs.get_string("padding_mode", "zeros"));
  ETC_ASSIGN_OR_RETURN(int64_t align, attrs.get_int("align_corners", 0));
  if (mode == "linear")
    p.mode = Mode::kLinear;
  else if (mode == "nearest")
    p.mode = Mode::kNearest;
  else if (mode == "cubic")
    p.mode = Mode::kCubic;
  else
    return fail(Error::InvalidProgram, "mode must be linear, nearest or cubic, got ", std::string(mode));
  if (padding == "zeros")
    p.padding = Padding::kZeros;
  else if (padding == "border")
    p.padding = Padding::kBorder;
  else if (padding == "reflection")
    p.padding = Padding::kReflection;
  else
    return fail(Error::InvalidProgram, "padding_mode must be zeros, border or reflection, got ",
                std::string(padding));
  p.align_corners = align != 0;
  return p;
}

Status infer_grid_sample(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(read_params(attrs));
  const TensorSpec& x = in[0];
  const TensorSpec& grid = in[1];
  ETC_CHECK_OR_FAIL(x.dtype == DType::Float32 || x.dtype == DType::Float64, Error::InvalidType,
                    "takes float32 or float64, got ", dtype_name(x.dtype));
  ETC_CHECK_OR_FAIL(grid.dtype == x.dtype, Error::InvalidType, "grid is ", dtype_name(grid.dtype), ", X is ",
                    dtype_name(x.dtype));
  ETC_CHECK_OR_FAIL(x.shape.rank() == 4, Error::InvalidShape, "X must be [N, C, H, W], got ", x.shape.str());
  ETC_CHECK_OR_FAIL(grid.shape.rank() == 4 && grid.shape[0] == x.shape[0] && grid.shape[3] == 2,
                    Error::InvalidShape, "grid must be [N, H_out, W_out, 2] with X's N, got ",
                    grid.shape.str(), " for X ", x.shape.str());
  ETC_CHECK_OR_FAIL(x.shape[2] > 0 && x.shape[3] > 0, Error::InvalidShape,
                    "X has no pixels: ", x.shape.str());
  out[0] = TensorSpec{x.dtype, Shape{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]}};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_grid_sample(const AttrList& attrs, Span<const TensorSpec> in,
                                                   Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(Params p, read_params(attrs));
  return std::unique_ptr<Kernel>(std::make_unique<GridSampleKernel>(in[0].dtype, p));
}

}  // namespace

const OpDef* grid_sample_op_def(EdgeOp op) {
  static const OpDef kDef{EdgeOp::GridSample, 2, 2, 1, 1, infer_grid_sample, create_grid_sample};
  return op == EdgeOp::GridSample ? &kDef : nullptr;
}

}  // namespace etc
