#pragma once
// The sampling plan of the resize kernel, one axis at a time: for each output
// index along an axis, which input indices to blend and with what weights
// (ONNX Resize semantics, as in the ONNX reference implementation). Computed
// once at init so that run() is only a gather and a weighted sum.

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"

namespace etc {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoordMode {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNn,
  TfCropAndResize,
};
// Simple: Resize-10 / Upsample rounding (as ONNX Runtime): floor on axes that
// are upsampled or kept, ceil on axes that are downsampled.
enum class ResizeNearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

Result<ResizeMode> parse_resize_mode(std::string_view s);
Result<ResizeCoordMode> parse_resize_coord_mode(std::string_view s);
Result<ResizeNearestMode> parse_resize_nearest_mode(std::string_view s);

// How a resize node samples, the same on every axis.
struct ResizeSampling {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordMode coord = ResizeCoordMode::HalfPixel;
  ResizeNearestMode nearest = ResizeNearestMode::RoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
};

// The sampling of one axis with its lengths, scale and region of interest.
struct ResizeAxisParams : ResizeSampling {
  int64_t in_len = 1;
  int64_t out_len = 1;
  // Scale of the coordinate transform; <= 0 means out_len / in_len (ONNX
  // `sizes` given). With `scales` given ONNX uses them as is, not out/in.
  double scale = 0.0;
  double roi_start = 0.0;  // tf_crop_and_resize only, normalized coordinates
  double roi_end = 1.0;
};

inline constexpr int kMaxResizeTaps = 4;

struct ResizeTaps {
  int64_t index[kMaxResizeTaps] = {};  // clamped into [0, in_len)
  double weight[kMaxResizeTaps] = {};
  int count = 0;
  bool extrapolate = false;  // tf_crop_and_resize sample outside the input
};

// Position of output index x in input coordinates.
double resize_source_coord(const ResizeAxisParams& p, int64_t x);

// The taps of output index x along one axis; does not allocate, so a kernel
// whose scales arrive at run time can build its plan in scratch memory.
// Requires in_len >= 1.
ResizeTaps resize_taps_at(const ResizeAxisParams& p, int64_t x);

// The taps of every output index along one axis. Taps with zero weight are
// dropped (an identity axis ends with one tap each). Requires in_len >= 1.
std::vector<ResizeTaps> resize_axis_taps(const ResizeAxisParams& p);

}  // namespace etc
