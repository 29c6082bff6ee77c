#pragma once
// Window geometry shared by the conv, conv_transpose and pool kernels. The
// attributes are parsed and validated once (infer and create), and every
// spatial quantity is laid out as 3 dims with leading unit dims for 1-D and
// 2-D ops, so each kernel has a single loop nest.

#include <array>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/shape.h"
#include "runtime/kernels/attrs.h"

namespace etc {

inline constexpr int kMaxSpatialRank = 3;
// Bound on every spatial input dim, kernel dim, stride, dilation and |pad|:
// with all of them at most 2^30 every extent and output-size formula below
// stays inside int64.
inline constexpr int64_t kMaxWindowValue = int64_t{1} << 30;
using Dims3 = std::array<int64_t, kMaxSpatialRank>;

struct WindowGeometry {
  int rank = 0;  // spatial rank of the op, 1..3
  Dims3 in{1, 1, 1};
  Dims3 out{1, 1, 1};
  Dims3 kernel{1, 1, 1};
  Dims3 stride{1, 1, 1};
  Dims3 dilation{1, 1, 1};
  Dims3 pad_begin{0, 0, 0};
  Dims3 pad_end{0, 0, 0};

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  // Extent of the dilated kernel along dim i.
  int64_t span(int i) const { return (kernel[i] - 1) * dilation[i] + 1; }
};

// Reads strides, pads (begin..., end...) and dilations for `rank` spatial
// dims (defaults 1, 0, 1), and the spatial input dims from the trailing dims
// of `input` (rank + 2 dims: N, C, spatial...). Fails naming the attribute
// when a length or value is invalid (values above kMaxWindowValue included); pads may be negative only when
// `allow_negative_pads` (conv_transpose uses them to crop or extend).
Status read_window_attrs(const AttrList& attrs, const Shape& input, bool allow_negative_pads,
                         WindowGeometry* g);

// Sets g->kernel from the trailing `g->rank` dims of `dims`; fails on a dim
// outside 1..kMaxWindowValue.
Status set_window_kernel(Span<const int64_t> dims, WindowGeometry* g);

// The output shape [N, channels, out...] of a window op.
Shape window_output_shape(const WindowGeometry& g, int64_t batch, int64_t channels);

// The first and one-past-last output index o in [0, out) whose input
// coordinate offset + o * stride lies in [0, in).
inline void valid_output_range(int64_t offset, int64_t stride, int64_t in, int64_t out, int64_t* lo,
                               int64_t* hi) {
  int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t h = in - offset <= 0 ? 0 : (in - 1 - offset) / stride + 1;
  if (l > out) l = out;
  if (h > out) h = out;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

}  // namespace etc
