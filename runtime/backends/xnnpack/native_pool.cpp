#include "runtime/backends/xnnpack/native_pool.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "runtime/backends/xnnpack/avx2_lanes.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_math_tasks.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace etc::xnnpack {
namespace {

// The valid taps of the window of output position `out` along an axis of
// `size` inputs.
PoolTaps valid_taps(size_t out, size_t stride, size_t pad, size_t kernel, size_t dilation, size_t size) {
  PoolTaps t;
  t.origin = static_cast<int64_t>(out * stride) - static_cast<int64_t>(pad);
  if (t.origin >= static_cast<int64_t>(size)) return t;
  t.end = static_cast<uint32_t>(
      std::min(kernel, static_cast<size_t>(static_cast<int64_t>(size) - 1 - t.origin) / dilation + 1));
  if (t.origin < 0)
    t.first = static_cast<uint32_t>(
        std::min<size_t>(t.end, (static_cast<size_t>(-t.origin) + dilation - 1) / dilation));
  return t;
}

std::vector<PoolTaps> axis_taps(size_t outs, size_t stride, size_t pad, size_t kernel, size_t dilation,
                                size_t size) {
  std::vector<PoolTaps> taps(outs);
  for (size_t o = 0; o < outs; ++o) taps[o] = valid_taps(o, stride, pad, kernel, dilation, size);
  return taps;
}

struct Task {
  const MaxPoolOp* op;
  const float* x;
  float* y;
};

// Output pixels in order: the current one's output, where its window starts
// in the input (an offset: a padded window starts before its image) and
// the valid taps of its row and column.
struct PixelCursor {
  const MaxPoolOp& p;
  size_t r, ox;      // output row (over all images) and column
  int64_t rows = 0;  // the window's first row, in floats from the input's start
  const PoolTaps* ky = nullptr;
  float* out;

  PixelCursor(const Task& t, size_t first)
      : p(*t.op), r(first / t.op->out_w), ox(first % t.op->out_w), out(t.y + first * t.op->channels) {
    start_row();
  }
  const PoolTaps& kx() const { return p.columns[ox]; }
  // Where the window's taps count from, in floats from the input's start.
  int64_t window() const { return rows + kx().origin * static_cast<int64_t>(p.channels); }
  // Channel c of tap (i, j) of the window starting at `window`.
  const float* tap(const float* x, int64_t window, size_t i, size_t j, size_t c) const {
    return x + window +
           static_cast<int64_t>(i * p.dilation_h * p.in_w * p.channels + j * p.dilation_w * p.channels + c);
  }
  void advance() {
    out += p.channels;
    if (++ox < p.out_w) return;
    ox = 0, ++r;
    start_row();
  }

 private:
  void start_row() {
    const size_t n = r / p.out_h;
    ky = &p.rows[r % p.out_h];
    const auto row_floats = static_cast<int64_t>(p.in_w * p.channels);
    rows = (static_cast<int64_t>(n * p.in_h) + ky->origin) * row_floats;
  }
};

#if defined(__x86_64__)
// GCC 12 reads _mm512_max_ps's pass-through operand as uninitialised.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Output pixels [first, first + count), 16 channels a vector.
__attribute__((target("avx512f"))) void pixels_avx512(void* context, size_t first, size_t count) {
  const Task& t = *static_cast<const Task*>(context);
  const MaxPoolOp& p = *t.op;
  const size_t channels = p.channels;
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi), none = _mm512_set1_ps(-INFINITY);
  for (PixelCursor at(t, first); count-- > 0; at.advance()) {
    const PoolTaps &ky = *at.ky, &kx = at.kx();
    const int64_t window = at.window();
    float* out = at.out;
    size_t c = 0;
    for (; c + 64 <= channels; c += 64) {
      __m512 m0 = none, m1 = none, m2 = none, m3 = none;
      for (size_t i = ky.first; i < ky.end; ++i)
        for (size_t j = kx.first; j < kx.end; ++j) {
          const float* v = at.tap(t.x, window, i, j, c);
          m0 = _mm512_max_ps(m0, _mm512_loadu_ps(v));
          m1 = _mm512_max_ps(m1, _mm512_loadu_ps(v + 16));
          m2 = _mm512_max_ps(m2, _mm512_loadu_ps(v + 32));
          m3 = _mm512_max_ps(m3, _mm512_loadu_ps(v + 48));
        }
      _mm512_storeu_ps(out + c, _mm512_min_ps(_mm512_max_ps(m0, lo), hi));
      _mm512_storeu_ps(out + c + 16, _mm512_min_ps(_mm512_max_ps(m1, lo), hi));
      _mm512_storeu_ps(out + c + 32, _mm512_min_ps(_mm512_max_ps(m2, lo), hi));
      _mm512_storeu_ps(out + c + 48, _mm512_min_ps(_mm512_max_ps(m3, lo), hi));
    }
    for (; c < channels; c += 16) {
      const size_t lanes = std::min<size_t>(16, channels - c);
      const auto mask = static_cast<__mmask16>((uint32_t{1} << lanes) - 1);
      __m512 m = none;
      for (size_t i = ky.first; i < ky.end; ++i)
        for (size_t j = kx.first; j < kx.end; ++j)
          m = _mm512_max_ps(m, _mm512_maskz_loadu_ps(mask, at.tap(t.x, window, i, j, c)));
      _mm512_mask_storeu_ps(out + c, mask, _mm512_min_ps(_mm512_max_ps(m, lo), hi));
    }
  }
}

// The same, 8 channels a vector, with AVX2.
__attribute__((target("avx2,fma"))) void pixels_avx2(void* context, size_t first, size_t count) {
  const Task& t = *static_cast<const Task*>(context);
  const MaxPoolOp& p = *t.op;
  const size_t channels = p.channels;
  const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi), none = _mm256_set1_ps(-INFINITY);
  for (PixelCursor at(t, first); count-- > 0; at.advance()) {
    const PoolTaps &ky = *at.ky, &kx = at.kx();
    const int64_t window = at.window();
    float* out = at.out;
    size_t c = 0;
    for (; c + 32 <= channels; c += 32) {
      __m256 m0 = none, m1 = none, m2 = none, m3 = none;
      for (size_t i = ky.first; i < ky.end; ++i)
        for (size_t j = kx.first; j < kx.end; ++j) {
          const float* v = at.tap(t.x, window, i, j, c);
          m0 = _mm256_max_ps(m0, _mm256_loadu_ps(v));
          m1 = _mm256_max_ps(m1, _mm256_loadu_ps(v + 8));
          m2 = _mm256_max_ps(m2, _mm256_loadu_ps(v + 16));
          m3 = _mm256_max_ps(m3, _mm256_loadu_ps(v + 24));
        }
      _mm256_storeu_ps(out + c, _mm256_min_ps(_mm256_max_ps(m0, lo), hi));
      _mm256_storeu_ps(out + c + 8, _mm256_min_ps(_mm256_max_ps(m1, lo), hi));
      _mm256_storeu_ps(out + c + 16, _mm256_min_ps(_mm256_max_ps(m2, lo), hi));
      _mm256_storeu_ps(out + c + 24, _mm256_min_ps(_mm256_max_ps(m3, lo), hi));
    }
    for (; c < channels; c += 8) {
      const __m256i mask = lanes_avx2(std::min<size_t>(8, channels - c));
      __m256 m = none;
      for (size_t i = ky.first; i < ky.end; ++i)
        for (size_t j = kx.first; j < kx.end; ++j)
          m = _mm256_max_ps(m, _mm256_maskload_ps(at.tap(t.x, window, i, j, c), mask));
      _mm256_maskstore_ps(out + c, mask, _mm256_min_ps(_mm256_max_ps(m, lo), hi));
    }
  }
}

#pragma GCC diagnostic pop
#endif

}  // namespace

bool max_pool_can_run_natively(const fb::Node& node) {
  return node.type() == fb::NodeType::MaxPooling2d && node.flags() == 0 && native_convolution_available();
}

MaxPoolOp compile_max_pool(const BlobView& view, const fb::Node& node) {
  MaxPoolOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo &x = view.tensors[op.input], &y = view.tensors[op.output];
  op.batch = x.dims[0], op.in_h = x.dims[1], op.in_w = x.dims[2], op.channels = x.dims[3];
  op.out_h = y.dims[1], op.out_w = y.dims[2];
  op.dilation_h = node_param(node.dilation(), 0, 1), op.dilation_w = node_param(node.dilation(), 1, 1);
  op.rows = axis_taps(op.out_h, node_param(node.stride(), 0, 1), node_param(node.padding(), 0, 0),
                      node_param(node.kernel(), 0, 1), op.dilation_h, op.in_h);
  op.columns = axis_taps(op.out_w, node_param(node.stride(), 1, 1), node_param(node.padding(), 3, 0),
                         node_param(node.kernel(), 1, 1), op.dilation_w, op.in_w);
  op.lo = node.output_min(), op.hi = node.output_max();
  return op;
}

void run_max_pool(const MaxPoolOp& op, float* const* data, pthreadpool_t pool) {
#if defined(__x86_64__)
  Task task{&op, data[op.input], data[op.output]};
  const size_t pixels = op.batch * op.out_h * op.out_w;
  pthreadpool_parallelize_1d_tile_1d(pool, native_avx512_available() ? pixels_avx512 : pixels_avx2, &task,
                                     pixels, math_tasks::eight_a_thread(pool, pixels), 0);
#else
  (void)op, (void)data, (void)pool;
#endif
}

}  // namespace etc::xnnpack
