#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/backends/xnnpack/native_math.h"
#include "runtime/backends/xnnpack/native_math_tasks.h"
#include "runtime/kernels/portable/resize_plan.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The native resize nodes of native_math.h: nearest (NHWC, with an added
// residual where one folds in) and bilinear into an NCHW delegate output.

namespace etc::xnnpack {
using namespace math_tasks;
namespace {

// ---- bilinear resize into NCHW ----

// out[x] = w0 p[x] + w1 q[x] for x < n. The output (the delegate's, read
// by no node after) is written past the caches where the CPU can: on x86-64
// with streaming stores, which skip reading each line before writing it.
void blend_row(const float* p, const float* q, float w0, float w1, float* out, size_t n) {
  size_t x = 0;
#if defined(__x86_64__)
  for (; x < n && reinterpret_cast<uintptr_t>(out + x) % 16 != 0; ++x) out[x] = w0 * p[x] + w1 * q[x];
  const __m128 a = _mm_set1_ps(w0), b = _mm_set1_ps(w1);
  for (; x + 4 <= n; x += 4)
    _mm_stream_ps(out + x,
                  _mm_add_ps(_mm_mul_ps(a, _mm_loadu_ps(p + x)), _mm_mul_ps(b, _mm_loadu_ps(q + x))));
#endif
  for (; x < n; ++x) out[x] = w0 * p[x] + w1 * q[x];
}

// Output rows, a block of output columns and of channels at a time. Each
// input row the rows read is first resampled along x into [channel][column]
// — once for all the output rows that read it in turn: an upsampling by k
// reads each input row for about 2k output rows, so this samples k times
// less than blending two input rows for every output row and then sampling
// it — and each output row then blends two resampled rows, contiguous
// floats (LR-ASPP's 21 x 320 x 320 logits from 40 x 40: 1.18 -> ~0.4 ms at
// one thread on Zen 5).
void resize_bilinear_nchw_rows(void* context, size_t first, size_t count) {
  // Named members, not a structured binding: the row lambda below captures
  // `op`, which clang before 16 refuses for a binding.
  const auto& task = *static_cast<const Context<ResizeBilinearNchwOp>*>(context);
  const ResizeBilinearNchwOp* op = task.op;
  float* const* data = task.data;
  constexpr size_t kColumns = 1024;  // output columns resampled at a time
  constexpr size_t kFloats = 16384;  // two resampled rows of a channel block
  float resampled[kFloats];
  const size_t c = op->channels, in_w = op->in_w, out_w = op->out_w, out_h = op->out_h;
  const float* in = data[op->input];
  for (size_t x0 = 0; x0 < out_w; x0 += kColumns) {
    const size_t xn = std::min(kColumns, out_w - x0);
    const size_t block = std::max<size_t>(1, kFloats / (2 * xn));
    for (size_t c0 = 0; c0 < c; c0 += block) {
      const size_t cn = std::min(block, c - c0);
      float* slot[2] = {resampled, resampled + cn * xn};
      int64_t held[2] = {-1, -1};  // the input row (over all images) each slot holds
      // The slot holding input row `row`, resampling it into the slot that
      // does not hold `keep` where neither holds it.
      const auto row_of = [&](int64_t row, int64_t keep) -> const float* {
        for (size_t s = 0; s < 2; ++s)
          if (held[s] == row) return slot[s];
        const size_t s = held[0] == keep ? 1 : 0;
        const float* src = in + static_cast<size_t>(row) * in_w * c + c0;
        for (size_t k = 0; k < cn; ++k)
          for (size_t x = 0; x < xn; ++x)
            slot[s][k * xn + x] =
                op->wx0[x0 + x] * src[op->x0[x0 + x] * c + k] + op->wx1[x0 + x] * src[op->x1[x0 + x] * c + k];
        held[s] = row;
        return slot[s];
      };
      for (size_t r = first; r < first + count; ++r) {
        const size_t b = r / out_h, y = r % out_h;
        const auto top = static_cast<int64_t>(b * op->in_h + op->y0[y]);
        const auto bottom = static_cast<int64_t>(b * op->in_h + op->y1[y]);
        const float* t = row_of(top, bottom);
        const float* u = row_of(bottom, top);
        const float w0 = op->wy0[y], w1 = op->wy1[y];
        for (size_t k = 0; k < cn; ++k) {
          float* out = data[op->output] + ((b * c + c0 + k) * out_h + y) * out_w + x0;
          blend_row(t + k * xn, u + k * xn, w0, w1, out, xn);
        }
      }
    }
  }
#if defined(__x86_64__)
  _mm_sfence();  // the streamed rows are visible before the task ends
#endif
}

// ---- nearest resize ----

void resize_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<ResizeNearestOp>*>(context);
  const size_t out_h = op->rows.size(), out_w = op->cols.size(), c = op->channels;
  for (size_t r = first; r < first + count; ++r) {
    const size_t b = r / out_h, y = r % out_h;
    const float* src = data[op->input] + (b * op->in_h + op->rows[y]) * op->in_w * c;
    float* dst = data[op->output] + r * out_w * c;
    if (op->addend < 0) {
      for (size_t x = 0; x < out_w; ++x) std::memcpy(dst + x * c, src + op->cols[x] * c, c * sizeof(float));
      continue;
    }
    const float* add = data[op->addend] + r * out_w * c;
    for (size_t x = 0; x < out_w; ++x) {
      const float* from = src + op->cols[x] * c;
      for (size_t i = 0; i < c; ++i)
        dst[x * c + i] = std::min(std::max(from[i] + add[x * c + i], op->lo), op->hi);
    }
  }
}

}  // namespace

ResizeNearestOp compile_resize_nearest(const BlobView& view, const fb::Node& node) {
  ResizeNearestOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo &in = view.tensors[op.input], &out = view.tensors[op.output];
  op.batch = in.dims[0], op.in_h = in.dims[1], op.in_w = in.dims[2], op.channels = in.dims[3];
  const std::vector<size_t> idx = sizes(node.indices());
  op.rows.assign(idx.begin(), idx.begin() + static_cast<ptrdiff_t>(out.dims[1]));
  op.cols.assign(idx.begin() + static_cast<ptrdiff_t>(out.dims[1]), idx.end());
  return op;
}

ResizeBilinearNchwOp compile_resize_bilinear_nchw(const BlobView& view, const fb::Node& node) {
  ResizeBilinearNchwOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo &in = view.tensors[op.input], &out = view.tensors[op.output];
  op.batch = in.dims[0], op.in_h = in.dims[1], op.in_w = in.dims[2], op.channels = in.dims[3];
  op.out_h = out.dims[1], op.out_w = out.dims[2];
  // XNNPACK's flags name the coordinate transform (preprocessors/xnnpack/shape.cpp).
  ResizeAxisParams p;
  p.mode = ResizeMode::Linear;
  p.coord = (node.flags() & XNN_FLAG_ALIGN_CORNERS)            ? ResizeCoordMode::AlignCorners
            : (node.flags() & XNN_FLAG_TENSORFLOW_LEGACY_MODE) ? ResizeCoordMode::Asymmetric
                                                               : ResizeCoordMode::HalfPixel;
  const auto axis = [&](size_t in_len, size_t out_len, std::vector<uint32_t>& i0, std::vector<uint32_t>& i1,
                        std::vector<float>& w0, std::vector<float>& w1) {
    p.in_len = static_cast<int64_t>(in_len);
    p.out_len = static_cast<int64_t>(out_len);
    for (int64_t x = 0; x < p.out_len; ++x) {
      const ResizeTaps t = resize_taps_at(p, x);
      // Two taps, or one (an exact sample); weights as the plan gives them.
      i0.push_back(static_cast<uint32_t>(t.index[0]));
      i1.push_back(static_cast<uint32_t>(t.count > 1 ? t.index[1] : t.index[0]));
      w0.push_back(static_cast<float>(t.weight[0]));
      w1.push_back(t.count > 1 ? static_cast<float>(t.weight[1]) : 0.0f);
    }
  };
  axis(op.in_h, op.out_h, op.y0, op.y1, op.wy0, op.wy1);
  axis(op.in_w, op.out_w, op.x0, op.x1, op.wx0, op.wx1);
  return op;
}

void run_math_op(const ResizeBilinearNchwOp& op, float* const* data, pthreadpool_t pool) {
  Context<ResizeBilinearNchwOp> c{&op, data};
  // Runs of consecutive rows, which share their input rows.
  const size_t rows = op.batch * op.out_h;
  pthreadpool_parallelize_1d_tile_1d(pool, resize_bilinear_nchw_rows, &c, rows, eight_a_thread(pool, rows),
                                     0);
}

void run_math_op(const ResizeNearestOp& op, float* const* data, pthreadpool_t pool) {
  Context<ResizeNearestOp> c{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, resize_rows, &c, op.batch * op.rows.size(),
                                     tile_for(op.cols.size() * op.channels), 0);
}

}  // namespace etc::xnnpack
