#include "runtime/backends/xnnpack/native_grouped.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/backends/xnnpack/native_epilogue_ps.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {

struct NativeGrouped : NativeEpilogue {
  uint32_t input = 0;
  size_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  size_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  size_t pad_top = 0, pad_left = 0;
  size_t group = 0;  // channels a group (in and out): 2, 4 or 8
  float lo = -INFINITY, hi = INFINITY;
  // Lane l of an output vector reads input lane lane_group[l] + i at step i.
  alignas(64) int32_t lane_group[16] = {};
  // [channels / 16][taps][group][16]: the weights of output channels c0 to
  // c0 + 15 for tap t and step i, then the bias [channels].
  AlignedBuffer weights;
};

void NativeGroupedDeleter::operator()(NativeGrouped* conv) const { delete conv; }

namespace {

constexpr size_t kMaxTaps = 64;

bool group_width_supported(uint64_t g) { return g == 2 || g == 4 || g == 8; }

}  // namespace

bool grouped_can_run_natively(const fb::Node& node) {
  if (node.type() != fb::NodeType::Convolution2d || node.groups() <= 1 || node.flags() != 0) return false;
  const uint64_t g = node.group_input_channels();
  return g == node.group_output_channels() && group_width_supported(g) && (g * node.groups()) % 16 == 0 &&
         node_param(node.kernel(), 0, 1) * node_param(node.kernel(), 1, 1) <= kMaxTaps &&
         native_avx512_available();
}

NativeEpilogue& epilogue(NativeGrouped& conv) { return conv; }

Result<NativeGroupedPtr> compile_native_grouped(const BlobView& view, const fb::Node& node) {
  NativeGroupedPtr conv(new NativeGrouped);
  NativeGrouped& c = *conv;
  c.input = node.inputs()->Get(0);
  c.output = node.outputs()->Get(0);
  const TensorInfo &x = view.tensors[c.input], &y = view.tensors[c.output];
  const TensorInfo& filter = view.tensors[node.inputs()->Get(1)];
  c.batch = x.dims[0], c.in_h = x.dims[1], c.in_w = x.dims[2], c.channels = x.dims[3];
  c.out_h = y.dims[1], c.out_w = y.dims[2];
  c.kernel_h = node_param(node.kernel(), 0, 1), c.kernel_w = node_param(node.kernel(), 1, 1);
  c.stride_h = node_param(node.stride(), 0, 1), c.stride_w = node_param(node.stride(), 1, 1);
  c.dilation_h = node_param(node.dilation(), 0, 1), c.dilation_w = node_param(node.dilation(), 1, 1);
  c.pad_top = node_param(node.padding(), 0, 0), c.pad_left = node_param(node.padding(), 3, 0);
  c.group = node.group_input_channels();
  for (size_t l = 0; l < 16; ++l) c.lane_group[l] = static_cast<int32_t>(l / c.group * c.group);
  c.lo = node.output_min(), c.hi = node.output_max();
  c.out_stride = c.channels;
  const size_t taps = c.kernel_h * c.kernel_w;
  // The blob's filter is [channels, kh, kw, group] (output channels outer).
  if (filter.rank != 4 || filter.dims[0] != c.channels || filter.dims[1] != c.kernel_h ||
      filter.dims[2] != c.kernel_w || filter.dims[3] != c.group || y.dims[3] != c.channels)
    return fail(Error::DelegateInvalidCompatibility,
                "xnnpack: grouped convolution filter does not match its node");
  const size_t weight_floats = c.channels * taps * c.group;
  c.weights = AlignedBuffer::allocate((weight_floats + c.channels) * sizeof(float));
  if (!c.weights)
    return fail(Error::DelegateMemoryAllocationFailed,
                "xnnpack: cannot allocate grouped convolution weights");
  float* w = c.weights.as<float>();
  const auto* f = reinterpret_cast<const float*>(filter.constant);
  for (size_t o = 0; o < c.channels; ++o)
    for (size_t t = 0; t < taps; ++t)
      for (size_t i = 0; i < c.group; ++i)
        w[(((o / 16) * taps + t) * c.group + i) * 16 + o % 16] = f[(o * taps + t) * c.group + i];
  float* bias = w + weight_floats;
  if (node.inputs()->size() > 2)
    std::memcpy(bias, view.tensors[node.inputs()->Get(2)].constant, c.channels * sizeof(float));
  else
    std::fill(bias, bias + c.channels, 0.0f);
  return conv;
}

namespace {

struct Task {
  const NativeGrouped* conv;
  const float* x;
  float* y;
  const float* residual;
};

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in swish.h

template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) inline void store(const NativeGrouped& c, __m512 acc, float* y,
                                                     const float* res) {
  const __m512 sum = _mm512_min_ps(_mm512_max_ps(acc, _mm512_set1_ps(c.lo)), _mm512_set1_ps(c.hi));
  _mm512_storeu_ps(y, finish_ps<Residual, Act>(c, sum, Residual ? _mm512_loadu_ps(res) : sum));
}

// P output pixels (P <= 4) for the 16 output channels from c0. `tap_x[t][p]`
// points at pixel p's input pixel for valid tap t (`tap_index[t]` its
// number in the window); `n` valid taps, the same for all P pixels.
template <int P, bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void pixels(const NativeGrouped& c, size_t c0,
                                               const float* const (*tap_x)[4], const size_t* tap_index,
                                               size_t n, float* const* y, const float* const* res) {
  const size_t taps = c.kernel_h * c.kernel_w, g = c.group;
  const float* w = c.weights.as<float>() + (c0 / 16) * taps * g * 16;
  const float* bias = c.weights.as<float>() + c.channels * taps * g + c0;
  __m512 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = _mm512_load_ps(bias);
  // Lane l reads channel c0 + (l / g) * g + i: a permute of the input vector at c0.
  const __m512i first = _mm512_load_si512(c.lane_group);
  for (size_t k = 0; k < n; ++k) {
    const float* wt = w + tap_index[k] * g * 16;
    __m512 xv[P];
    for (int p = 0; p < P; ++p) xv[p] = _mm512_loadu_ps(tap_x[k][p] + c0);
    __m512i index = first;
    for (size_t i = 0; i < g; ++i) {
      const __m512 wv = _mm512_load_ps(wt + i * 16);
      for (int p = 0; p < P; ++p) acc[p] = _mm512_fmadd_ps(_mm512_permutexvar_ps(index, xv[p]), wv, acc[p]);
      index = _mm512_add_epi32(index, _mm512_set1_epi32(1));
    }
  }
  for (int p = 0; p < P; ++p) store<Residual, Act>(c, acc[p], y[p] + c0, Residual ? res[p] + c0 : nullptr);
}

// Output row r = b * out_h + oy.
template <bool Residual, ConvActivation Act>
__attribute__((target("avx512f"))) void row(const Task& task, size_t r) {
  const NativeGrouped& c = *task.conv;
  const size_t b = r / c.out_h, oy = r % c.out_h;
  const size_t row_floats = c.in_w * c.channels;
  const float* image = task.x + b * c.in_h * row_floats;
  size_t ox = 0;
  while (ox < c.out_w) {
    // Four pixels share a block where they have the same valid taps: all
    // of their windows inside the row's columns (else one pixel alone).
    auto inside = [&](size_t px) {
      const ptrdiff_t left = static_cast<ptrdiff_t>(px * c.stride_w) - static_cast<ptrdiff_t>(c.pad_left);
      const ptrdiff_t right = left + static_cast<ptrdiff_t>((c.kernel_w - 1) * c.dilation_w);
      return left >= 0 && right < static_cast<ptrdiff_t>(c.in_w);
    };
    const int count = ox + 4 <= c.out_w && inside(ox) && inside(ox + 3) ? 4 : 1;
    const float* tap_x[kMaxTaps][4];
    size_t tap_index[kMaxTaps];
    size_t n = 0;
    for (size_t ky = 0; ky < c.kernel_h; ++ky) {
      const ptrdiff_t iy =
          static_cast<ptrdiff_t>(oy * c.stride_h + ky * c.dilation_h) - static_cast<ptrdiff_t>(c.pad_top);
      if (iy < 0 || iy >= static_cast<ptrdiff_t>(c.in_h)) continue;
      for (size_t kx = 0; kx < c.kernel_w; ++kx) {
        const ptrdiff_t ix0 =
            static_cast<ptrdiff_t>(ox * c.stride_w + kx * c.dilation_w) - static_cast<ptrdiff_t>(c.pad_left);
        if (ix0 < 0 || ix0 >= static_cast<ptrdiff_t>(c.in_w)) continue;  // only when count == 1
        for (int p = 0; p < count; ++p)
          tap_x[n][p] = image + static_cast<size_t>(iy) * row_floats +
                        (static_cast<size_t>(ix0) + p * c.stride_w) * c.channels;
        tap_index[n++] = ky * c.kernel_w + kx;
      }
    }
    float* y[4];
    const float* res[4] = {};
    for (int p = 0; p < count; ++p) {
      const size_t pixel = r * c.out_w + ox + p;
      y[p] = task.y + pixel * c.out_stride + c.out_offset;
      if (Residual) res[p] = task.residual + pixel * c.channels;
    }
    for (size_t c0 = 0; c0 < c.channels; c0 += 16) {
      if (count == 4)
        pixels<4, Residual, Act>(c, c0, tap_x, tap_index, n, y, res);
      else
        pixels<1, Residual, Act>(c, c0, tap_x, tap_index, n, y, res);
    }
    ox += static_cast<size_t>(count);
  }
}
#pragma GCC diagnostic pop

#endif

void rows(void* context, size_t first, size_t count) {
#if defined(__x86_64__)
  const auto& task = *static_cast<const Task*>(context);
  with_epilogue(task.conv->activation, task.residual != nullptr, [&]<bool Residual, ConvActivation Act>() {
    for (size_t r = first; r < first + count; ++r) row<Residual, Act>(task, r);
  });
#else
  (void)context, (void)first, (void)count;
#endif
}

}  // namespace

void run_native_grouped(const NativeGrouped& conv, float* const* data, pthreadpool_t pool) {
  const Task task{&conv, data[conv.input], data[conv.output],
                  conv.has_residual ? data[conv.residual] : nullptr};
  pthreadpool_parallelize_1d_tile_1d(pool, rows, const_cast<Task*>(&task), conv.batch * conv.out_h, 1, 0);
}

}  // namespace etc::xnnpack
