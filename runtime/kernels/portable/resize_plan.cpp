#include "runtime/kernels/portable/resize_plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace etc {

namespace {

template <typename E, size_t N>
Result<E> parse_name(const std::pair<std::string_view, E> (&names)[N], std::string_view s, const char* what) {
  for (const auto& [name, value] : names)
    if (name == s) return value;
  return fail(Error::InvalidProgram, "unknown ", what, " '", std::string(s), "'");
}

constexpr std::pair<std::string_view, ResizeMode> kModeNames[] = {
    {"nearest", ResizeMode::Nearest},
    {"linear", ResizeMode::Linear},
    {"cubic", ResizeMode::Cubic},
};
constexpr std::pair<std::string_view, ResizeCoordMode> kCoordModeNames[] = {
    {"half_pixel", ResizeCoordMode::HalfPixel},
    {"pytorch_half_pixel", ResizeCoordMode::PytorchHalfPixel},
    {"align_corners", ResizeCoordMode::AlignCorners},
    {"asymmetric", ResizeCoordMode::Asymmetric},
    {"tf_half_pixel_for_nn", ResizeCoordMode::TfHalfPixelForNn},
    {"tf_crop_and_resize", ResizeCoordMode::TfCropAndResize},
};
constexpr std::pair<std::string_view, ResizeNearestMode> kNearestModeNames[] = {
    {"round_prefer_floor", ResizeNearestMode::RoundPreferFloor},
    {"round_prefer_ceil", ResizeNearestMode::RoundPreferCeil},
    {"floor", ResizeNearestMode::Floor},
    {"ceil", ResizeNearestMode::Ceil},
    {"simple", ResizeNearestMode::Simple},
};

}  // namespace

Result<ResizeMode> parse_resize_mode(std::string_view s) { return parse_name(kModeNames, s, "mode"); }

Result<ResizeCoordMode> parse_resize_coord_mode(std::string_view s) {
  return parse_name(kCoordModeNames, s, "coordinate_transformation_mode");
}

Result<ResizeNearestMode> parse_resize_nearest_mode(std::string_view s) {
  return parse_name(kNearestModeNames, s, "nearest_mode");
}

double resize_source_coord(const ResizeAxisParams& p, int64_t x) {
  const double in = static_cast<double>(p.in_len);
  const double out = static_cast<double>(p.out_len);
  const double xd = static_cast<double>(x);
  const bool given = p.scale > 0.0;
  const double scale = given ? p.scale : out / in;
  // The ONNX reference divides by (scale * in - 1) for align_corners, which
  // differs from (out - 1) when the given scales do not divide exactly.
  const double len = given ? p.scale * in : out;
  switch (p.coord) {
    case ResizeCoordMode::HalfPixel: return (xd + 0.5) / scale - 0.5;
    case ResizeCoordMode::PytorchHalfPixel: return p.out_len > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordMode::AlignCorners: return len == 1.0 ? 0.0 : xd * (in - 1.0) / (len - 1.0);
    case ResizeCoordMode::Asymmetric: return xd / scale;
    case ResizeCoordMode::TfHalfPixelForNn: return (xd + 0.5) / scale;
    case ResizeCoordMode::TfCropAndResize:
      if (p.out_len == 1) return 0.5 * (p.roi_start + p.roi_end) * (in - 1.0);
      return p.roi_start * (in - 1.0) + xd * (p.roi_end - p.roi_start) * (in - 1.0) / (out - 1.0);
  }
  return 0.0;
}

namespace {

// Index picked by nearest mode; an integral coordinate always picks itself.
// x as an index: NaN as 0 and anything beyond ±2^62 clamped, so the
// conversion is always defined (callers clamp to the axis afterwards).
int64_t clamped_index(double x) {
  constexpr double kFar = 4.611686018427387904e18;  // 2^62
  if (!(x == x)) return 0;
  return static_cast<int64_t>(std::clamp(x, -kFar, kFar));
}

int64_t nearest_index(double x, ResizeNearestMode mode, bool downsampling) {
  const double f = std::floor(x);
  const double ratio = x - f;
  const int64_t base = clamped_index(f);
  if (ratio == 0.0) return base;
  switch (mode) {
    case ResizeNearestMode::RoundPreferFloor: return ratio <= 0.5 ? base : base + 1;
    case ResizeNearestMode::RoundPreferCeil: return ratio < 0.5 ? base : base + 1;
    case ResizeNearestMode::Floor: return base;
    case ResizeNearestMode::Ceil: return base + 1;
    case ResizeNearestMode::Simple: return downsampling ? base + 1 : base;
  }
  return base;
}

// Keys cubic convolution weights of the taps at base-1, base, base+1, base+2
// for a sample at base + t, t in (0, 1].
void cubic_weights(double t, double a, double* w) {
  const double s = 1.0 - t;
  w[0] = ((a * (t + 1.0) - 5.0 * a) * (t + 1.0) + 8.0 * a) * (t + 1.0) - 4.0 * a;
  w[1] = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  w[2] = ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
  w[3] = ((a * (s + 1.0) - 5.0 * a) * (s + 1.0) + 8.0 * a) * (s + 1.0) - 4.0 * a;
}

ResizeTaps interpolating_taps(const ResizeAxisParams& p, double x) {
  // Neighbours are the closest input indices, ties going left: for an
  // integral x the sample sits at t = 1 of the interval to its left.
  double base_f = std::floor(x);
  double t = x - base_f;
  if (t == 0.0) {
    base_f -= 1.0;
    t = 1.0;
  }
  const int64_t base = clamped_index(base_f);
  int64_t idx[kMaxResizeTaps];
  double w[kMaxResizeTaps];
  int n = 0;
  if (p.mode == ResizeMode::Linear) {
    idx[0] = base, idx[1] = base + 1;
    w[0] = 1.0 - t, w[1] = t;
    n = 2;
  } else {
    for (int k = 0; k < 4; ++k) idx[k] = base - 1 + k;
    cubic_weights(t, p.cubic_coeff_a, w);
    n = 4;
  }
  if (p.exclude_outside) {
    double sum = 0.0;
    for (int k = 0; k < n; ++k) {
      if (idx[k] < 0 || idx[k] >= p.in_len) w[k] = 0.0;
      sum += w[k];
    }
    if (sum != 0.0)
      for (int k = 0; k < n; ++k) w[k] /= sum;
  }
  ResizeTaps taps;
  for (int k = 0; k < n; ++k) {
    if (w[k] == 0.0) continue;
    taps.index[taps.count] = std::clamp<int64_t>(idx[k], 0, p.in_len - 1);  // edge padding
    taps.weight[taps.count] = w[k];
    ++taps.count;
  }
  if (taps.count == 0) {  // every weight cancelled: keep the nearest sample
    taps.index[0] = std::clamp<int64_t>(clamped_index(std::round(x)), 0, p.in_len - 1);
    taps.weight[0] = 0.0;
    taps.count = 1;
  }
  return taps;
}

}  // namespace

ResizeTaps resize_taps_at(const ResizeAxisParams& p, int64_t x) {
  const double scale =
      p.scale > 0.0 ? p.scale : static_cast<double>(p.out_len) / static_cast<double>(p.in_len);
  const double src = resize_source_coord(p, x);
  ResizeTaps taps;
  if (p.coord == ResizeCoordMode::TfCropAndResize && (src < 0.0 || src > static_cast<double>(p.in_len - 1))) {
    taps.extrapolate = true;
    return taps;
  }
  if (p.mode != ResizeMode::Nearest) return interpolating_taps(p, src);
  // An axis kept at its size samples itself, as ONNX Runtime does: the
  // tf_half_pixel_for_nn centre x + 0.5 would otherwise round up to x + 1.
  if (p.in_len == p.out_len && scale == 1.0 && p.coord != ResizeCoordMode::TfCropAndResize) {
    taps.index[0] = x;
    taps.weight[0] = 1.0;
    taps.count = 1;
    return taps;
  }
  taps.index[0] = std::clamp<int64_t>(nearest_index(src, p.nearest, scale < 1.0), 0, p.in_len - 1);
  taps.weight[0] = 1.0;
  taps.count = 1;
  return taps;
}

std::vector<ResizeTaps> resize_axis_taps(const ResizeAxisParams& p) {
  std::vector<ResizeTaps> all(static_cast<size_t>(p.out_len));
  for (int64_t x = 0; x < p.out_len; ++x) all[static_cast<size_t>(x)] = resize_taps_at(p, x);
  return all;
}

}  // namespace etc
