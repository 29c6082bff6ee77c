#include "runtime/backends/xnnpack/native_math.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/backends/xnnpack/native_math_tasks.h"
#include "runtime/backends/xnnpack/native_matmul.h"
#include "runtime/backends/xnnpack/native_rows.h"
#include "runtime/kernels/portable/gemm.h"
#include "runtime/kernels/portable/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace etc::xnnpack {
using namespace math_tasks;
namespace {

using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

// ---- transpose ----

void transpose_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<TransposeOp>*>(context);
  const size_t rank = op->out_dims.size(), width = op->out_dims[rank - 1], s = op->in_stride[rank - 1];
  const float* in = data[op->input];
  float* out = data[op->output];
  for (size_t r = first; r < first + count; ++r) {
    size_t offset = 0, rest = r;
    for (size_t d = rank - 1; d-- > 0;) {
      offset += (rest % op->out_dims[d]) * op->in_stride[d];
      rest /= op->out_dims[d];
    }
    const float* src = in + offset;
    float* dst = out + r * width;
    if (s == 1) {
      std::memcpy(dst, src, width * sizeof(float));
    } else {
      for (size_t i = 0; i < width; ++i) dst[i] = src[i * s];
    }
  }
}

// ---- batched matrix product ----

void matmul_tile(void* context, size_t batch, size_t m_tile) {
  const auto& [op, data] = *static_cast<const Context<BatchMatMulOp>*>(context);
  size_t oa = 0, ob = 0, oc = 0, rest = batch;
  for (size_t d = op->batch.size(); d-- > 0;) {
    const size_t i = rest % op->batch[d];
    rest /= op->batch[d];
    oa += i * op->sa.batch[d], ob += i * op->sb.batch[d], oc += i * op->sc.batch[d];
  }
  const size_t m0 = m_tile * op->m_tile, rows = std::min(op->m_tile, op->m - m0);
  oa += m0 * op->sa.row, oc += m0 * op->sc.row;
  // Row-major with a leading dimension, or its transpose.
  const bool ta = op->sa.col != 1, tb = op->sb.col != 1;
  const size_t lda = ta ? op->sa.col : op->sa.row, ldb = tb ? op->sb.col : op->sb.row;
  gemm_f32(ta, tb, static_cast<int64_t>(rows), static_cast<int64_t>(op->n), static_cast<int64_t>(op->k), 1.0f,
           data[op->a] + oa, static_cast<int64_t>(std::max<size_t>(lda, 1)), data[op->b] + ob,
           static_cast<int64_t>(std::max<size_t>(ldb, 1)), 0.0f, data[op->c] + oc,
           static_cast<int64_t>(op->sc.row));
}

// ---- softmax ----

// Sum of f(x[i]) over n contiguous values, in blocks of 256.
template <typename F>
float sum_of(const float* x, size_t n, F f) {
  Eigen::Array<float, 256, 1> block;
  float total = 0;
  for (size_t b = 0; b < n; b += 256) {
    const auto len = static_cast<Eigen::Index>(std::min<size_t>(256, n - b));
    block.head(len) = f(ConstArray(x + b, len));
    total += blocked_sum(block.data(), static_cast<size_t>(len));
  }
  return total;
}

// Softmax of n values `stride` apart, in place in `y` (which holds x).
void softmax_strided(float* y, size_t n, size_t stride, bool log) {
  float max = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) max = std::max(max, y[i * stride]);
  if (stride == 1) {
    Array row(y, static_cast<Eigen::Index>(n));
    row -= max;
    if (log) {
      row -= std::log(sum_of(y, n, [](const ConstArray& v) { return v.exp(); }));
    } else {
      row = row.exp();
      row /= blocked_sum(y, n);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) y[i * stride] = std::exp(y[i * stride] - max);
  const float sum = blocked_sum(y, n, stride);
  if (log) {
    const float l = std::log(sum);
    for (size_t i = 0; i < n; ++i) y[i * stride] = std::log(y[i * stride]) - l;
  } else {
    for (size_t i = 0; i < n; ++i) y[i * stride] /= sum;
  }
}

void softmax_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<AxisSoftmaxOp>*>(context);
  const float* in = data[op->input];
  float* out = data[op->output];
  if (op->vector_rows) {
    for (size_t r = first; r < first + count; ++r)
      softmax_row(in + r * op->n, out + r * op->n, op->n, op->log);
    return;
  }
  for (size_t r = first; r < first + count; ++r) {
    const size_t o = r / op->inner, j = r % op->inner;
    const size_t base = o * op->n * op->inner + j;
    if (in != out)
      for (size_t i = 0; i < op->n; ++i) out[base + i * op->inner] = in[base + i * op->inner];
    softmax_strided(out + base, op->n, op->inner, op->log);
  }
}

// ---- layer norm ----

void layer_norm_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<LayerNormOp>*>(context);
  const auto w = static_cast<Eigen::Index>(op->width);
  if (op->vector_rows) {
    const float* bias = op->bias >= 0 ? data[op->bias] : nullptr;
    for (size_t r = first; r < first + count; ++r)
      layer_norm_row(data[op->input] + r * op->width, data[op->output] + r * op->width, op->width,
                     data[op->scale], bias, op->epsilon);
    return;
  }
  const ConstArray scale(data[op->scale], w);
  for (size_t r = first; r < first + count; ++r) {
    const float* x = data[op->input] + r * op->width;
    float* y = data[op->output] + r * op->width;
    const float mean = blocked_sum(x, op->width) / static_cast<float>(op->width);
    Array out(y, w);
    out = ConstArray(x, w) - mean;
    const float var =
        sum_of(y, op->width, [](const ConstArray& v) { return v.square(); }) / static_cast<float>(op->width);
    const float inv = 1.0f / std::sqrt(var + op->epsilon);
    if (op->bias >= 0)
      out = out * inv * scale + ConstArray(data[op->bias], w);
    else
      out = out * inv * scale;
  }
}

// ---- reduce ----

// One output row of a reduction over contiguous values (inner == 1).
float reduce_contiguous(fb::ReduceOp op, const float* x, size_t n) {
  switch (op) {
    case fb::ReduceOp::Max: return ConstArray(x, static_cast<Eigen::Index>(n)).maxCoeff();
    case fb::ReduceOp::Min: return ConstArray(x, static_cast<Eigen::Index>(n)).minCoeff();
    case fb::ReduceOp::SumSquare: return sum_of(x, n, [](const ConstArray& v) { return v.square(); });
    case fb::ReduceOp::Mean: return blocked_sum(x, n) / static_cast<float>(n);
    default: return blocked_sum(x, n);
  }
}

void reduce_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<ReduceOp>*>(context);
  for (size_t r = first; r < first + count; ++r)
    data[op->output][r] = reduce_contiguous(op->op, data[op->input] + r * op->n, op->n);
}

// Columns [j0, j0 + kColumns) of one outer index, over n rows `inner` apart:
// sums go through two levels of 32-row partial sums, so each term meets
// about 64 + n / 1024 roundings rather than n.
constexpr size_t kColumns = 64;

void reduce_columns(void* context, size_t outer, size_t block) {
  const auto& [op, data] = *static_cast<const Context<ReduceOp>*>(context);
  const size_t j0 = block * kColumns, w = std::min(kColumns, op->inner - j0);
  const float* x = data[op->input] + outer * op->n * op->inner + j0;
  float* y = data[op->output] + outer * op->inner + j0;
  if (op->op == fb::ReduceOp::Max || op->op == fb::ReduceOp::Min) {
    const bool max = op->op == fb::ReduceOp::Max;
    std::copy_n(x, w, y);
    for (size_t i = 1; i < op->n; ++i)
      for (size_t j = 0; j < w; ++j)
        y[j] = max ? std::max(y[j], x[i * op->inner + j]) : std::min(y[j], x[i * op->inner + j]);
    return;
  }
  const bool square = op->op == fb::ReduceOp::SumSquare;
  float l1[kColumns] = {}, l2[kColumns] = {}, total[kColumns] = {};
  for (size_t i = 0; i < op->n; ++i) {
    const float* row = x + i * op->inner;
    if (square) {
      for (size_t j = 0; j < w; ++j) l1[j] += row[j] * row[j];
    } else {
      for (size_t j = 0; j < w; ++j) l1[j] += row[j];
    }
    if ((i + 1) % 32 == 0) {
      for (size_t j = 0; j < w; ++j) l2[j] += l1[j], l1[j] = 0;
      if ((i + 1) % 1024 == 0)
        for (size_t j = 0; j < w; ++j) total[j] += l2[j], l2[j] = 0;
    }
  }
  const float scale = op->op == fb::ReduceOp::Mean ? 1.0f / static_cast<float>(op->n) : 1.0f;
  for (size_t j = 0; j < w; ++j) y[j] = (total[j] + (l2[j] + l1[j])) * scale;
}

// ---- elementwise ----

VectorFn vector_fn(fb::UnaryOp op) {
  switch (op) {
    case fb::UnaryOp::Tanh: return VectorFn::Tanh;
    case fb::UnaryOp::Erf: return VectorFn::Erf;
    case fb::UnaryOp::Exp: return VectorFn::Exp;
    case fb::UnaryOp::Log: return VectorFn::Log;
    case fb::UnaryOp::Gelu: return VectorFn::Gelu;
    case fb::UnaryOp::GeluTanh: return VectorFn::GeluTanh;
    case fb::UnaryOp::Reciprocal: return VectorFn::Reciprocal;
    case fb::UnaryOp::Softplus: return VectorFn::Softplus;
  }
  return VectorFn::Tanh;  // unreachable: init checked the blob's unary_op
}

void unary_chunks(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<UnaryMathOp>*>(context);
  constexpr size_t kChunk = 4096;
  const size_t begin = first * kChunk, end = std::min(op->total, (first + count) * kChunk);
  const auto len = static_cast<int64_t>(end - begin);
  vector_math(vector_fn(op->op), data[op->input] + begin, data[op->output] + begin, len);
}

// ---- channel scale ----

void scale_rows(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<ChannelScaleOp>*>(context);
  const size_t c = op->channels;
  const float lo = op->lo, hi = op->hi;
  for (size_t r = first; r < first + count; ++r) {
    const size_t b = r / op->pixels;
    const float* x = data[op->input] + r * c;
    const float* s = data[op->scale] + b * op->s_batch_stride;
    float* y = data[op->output] + r * c;
    for (size_t i = 0; i < c; ++i) {
      const float v = x[i] * s[i];
      y[i] = v < lo ? lo : (v > hi ? hi : v);
    }
  }
}

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // the undefined pass-through of the intrinsics
__attribute__((target("avx512f"))) void scale_rows_avx512(void* context, size_t first, size_t count) {
  const auto& [op, data] = *static_cast<const Context<ChannelScaleOp>*>(context);
  const size_t c = op->channels;
  const __m512 lo = _mm512_set1_ps(op->lo), hi = _mm512_set1_ps(op->hi);
  const __mmask16 tail = static_cast<__mmask16>((1u << (c % 16)) - 1);
  for (size_t r = first; r < first + count; ++r) {
    const float* x = data[op->input] + r * c;
    const float* s = data[op->scale] + r / op->pixels * op->s_batch_stride;
    float* y = data[op->output] + r * c;
    size_t i = 0;
    for (; i + 16 <= c; i += 16)
      _mm512_storeu_ps(
          y + i, _mm512_min_ps(
                     _mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(s + i)), lo), hi));
    if (tail != 0)
      _mm512_mask_storeu_ps(y + i, tail,
                            _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i),
                                                                      _mm512_maskz_loadu_ps(tail, s + i)),
                                                        lo),
                                          hi));
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

float blocked_sum(const float* x, size_t n, size_t stride) {
  // Eight independent partial sums per block of at most 128 terms, the
  // blocks combined pairwise.
  if (n <= 128) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    if (stride == 1) {
      for (; i + 8 <= n; i += 8)
        for (size_t l = 0; l < 8; ++l) acc[l] += x[i + l];
    }
    for (; i < n; ++i) acc[i % 8] += x[i * stride];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }
  const size_t half = (n / 2 + 7) / 8 * 8;
  return blocked_sum(x, half, stride) + blocked_sum(x + half * stride, n - half, stride);
}

TransposeOp compile_transpose(const BlobView& view, const fb::Node& node) {
  TransposeOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  std::vector<size_t> stride(in.rank, 1);
  for (size_t d = in.rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in.dims[d + 1];
  const std::vector<size_t> perm = sizes(node.perm());
  for (size_t j = 0; j < perm.size(); ++j) {
    const size_t dim = in.dims[perm[j]], s = stride[perm[j]];
    if (dim == 1) continue;
    if (!op.out_dims.empty() && op.in_stride.back() == s * dim) {
      op.out_dims.back() *= dim;  // still contiguous in the input: merge
      op.in_stride.back() = s;
      continue;
    }
    op.out_dims.push_back(dim);
    op.in_stride.push_back(s);
  }
  if (op.out_dims.empty()) op.out_dims = {1}, op.in_stride = {1};
  op.rows = 1;
  for (size_t d = 0; d + 1 < op.out_dims.size(); ++d) op.rows *= op.out_dims[d];
  return op;
}

BatchMatMulOp compile_batch_matmul(const BlobView& /*view*/, const fb::Node& node) {
  BatchMatMulOp op;
  op.a = node.inputs()->Get(0);
  op.b = node.inputs()->Get(1);
  op.c = node.outputs()->Get(0);
  op.batch = sizes(node.batch());
  const std::vector<size_t> mnk = sizes(node.mnk()), s = sizes(node.strides());
  op.m = mnk[0], op.n = mnk[1], op.k = mnk[2];
  for (size_t b : op.batch) op.batches *= b;
  const size_t per = op.batch.size() + 2;
  MatrixStrides* ms[3] = {&op.sa, &op.sb, &op.sc};
  for (size_t o = 0; o < 3; ++o) {
    ms[o]->batch.assign(s.begin() + o * per, s.begin() + o * per + op.batch.size());
    ms[o]->row = s[o * per + op.batch.size()];
    ms[o]->col = s[o * per + op.batch.size() + 1];
  }
  // Enough row tiles to share among threads even with one batch.
  const size_t min_rows = std::max<size_t>(8, 32768 / std::max<size_t>(1, op.n * op.k / 64 + 1));
  op.m_tile = op.batches >= 4 ? op.m : std::max<size_t>(min_rows, (op.m + 3) / 4);
  op.m_tile = std::min(op.m_tile, op.m);
  return op;
}

AxisSoftmaxOp compile_last_axis_softmax(const BlobView& view, const fb::Node& node) {
  AxisSoftmaxOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  op.n = in.dims[in.rank - 1];
  op.outer = in.numel / op.n;
  op.inner = 1;
  return op;
}

AxisSoftmaxOp compile_axis_softmax(const BlobView& view, const fb::Node& node) {
  AxisSoftmaxOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  // flags bit 1: dims axis.. normalized together (ONNX softmax before opset 13).
  const bool flatten = (node.flags() & 2u) != 0;
  op.outer = 1, op.inner = 1, op.n = 1;
  for (size_t d = 0; d < in.rank; ++d) {
    if (d < node.axis())
      op.outer *= in.dims[d];
    else if (d == node.axis() || flatten)
      op.n *= in.dims[d];
    else
      op.inner *= in.dims[d];
  }
  op.log = (node.flags() & 1u) != 0;
  return op;
}

LayerNormOp compile_layer_norm(const BlobView& view, const fb::Node& node) {
  LayerNormOp op;
  op.input = node.inputs()->Get(0);
  op.scale = node.inputs()->Get(1);
  if (node.inputs()->size() > 2) op.bias = node.inputs()->Get(2);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  op.width = 1;
  for (size_t d = node.axis(); d < in.rank; ++d) op.width *= in.dims[d];
  op.rows = in.numel / op.width;
  op.epsilon = node.epsilon();
  return op;
}

ReduceOp compile_reduce(const BlobView& view, const fb::Node& node) {
  ReduceOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  const TensorInfo& in = view.tensors[op.input];
  const std::vector<size_t> axes = sizes(node.axes());
  op.outer = 1, op.n = 1, op.inner = 1;
  for (size_t d = 0; d < in.rank; ++d) {
    if (d < axes.front())
      op.outer *= in.dims[d];
    else if (d <= axes.back())
      op.n *= in.dims[d];
    else
      op.inner *= in.dims[d];
  }
  op.op = node.reduce_op();
  return op;
}

UnaryMathOp compile_unary_math(const BlobView& view, const fb::Node& node) {
  UnaryMathOp op;
  op.input = node.inputs()->Get(0);
  op.output = node.outputs()->Get(0);
  op.total = view.tensors[op.input].numel;
  op.op = node.unary_op();
  return op;
}

void run_math_op(const TransposeOp& op, float* const* data, pthreadpool_t pool) {
  Context<TransposeOp> c{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, transpose_rows, &c, op.rows, tile_for(op.out_dims.back()), 0);
}

void run_math_op(const BatchMatMulOp& op, float* const* data, pthreadpool_t pool) {
  if (op.on_kernel && op.packed != nullptr) return run_matmul_on_kernel(op, data, op.packed, pool);
  Context<BatchMatMulOp> c{&op, data};
  pthreadpool_parallelize_2d(pool, matmul_tile, &c, op.batches, (op.m + op.m_tile - 1) / op.m_tile, 0);
}

void run_math_op(const AxisSoftmaxOp& op, float* const* data, pthreadpool_t pool) {
  Context<AxisSoftmaxOp> c{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, softmax_rows, &c, op.outer * op.inner, tile_for(op.n * 4), 0);
}

void run_math_op(const LayerNormOp& op, float* const* data, pthreadpool_t pool) {
  Context<LayerNormOp> c{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, layer_norm_rows, &c, op.rows, tile_for(op.width * 4), 0);
}

void run_math_op(const ReduceOp& op, float* const* data, pthreadpool_t pool) {
  Context<ReduceOp> c{&op, data};
  if (op.inner == 1)
    pthreadpool_parallelize_1d_tile_1d(pool, reduce_rows, &c, op.outer, tile_for(op.n), 0);
  else
    pthreadpool_parallelize_2d(pool, reduce_columns, &c, op.outer, (op.inner + kColumns - 1) / kColumns, 0);
}

void run_math_op(const UnaryMathOp& op, float* const* data, pthreadpool_t pool) {
  Context<UnaryMathOp> c{&op, data};
  pthreadpool_parallelize_1d_tile_1d(pool, unary_chunks, &c, (op.total + 4095) / 4096, 1, 0);
}

ChannelScaleOp compile_channel_scale(const BlobView& view, const fb::Node& node) {
  ChannelScaleOp op;
  op.input = node.inputs()->Get(0);
  op.scale = node.inputs()->Get(1);
  op.output = node.outputs()->Get(0);
  const TensorInfo &x = view.tensors[op.input], &s = view.tensors[op.scale];
  op.batch = x.dims[0];
  op.channels = x.dims[x.rank - 1];
  op.pixels = x.numel / op.batch / op.channels;
  op.s_batch_stride = s.dims[0] == 1 ? 0 : op.channels;
  op.lo = node.output_min(), op.hi = node.output_max();
  return op;
}

void run_math_op(const ChannelScaleOp& op, float* const* data, pthreadpool_t pool) {
  Context<ChannelScaleOp> c{&op, data};
#if defined(__x86_64__)
  const bool avx512 = native_avx512_available();
  const auto task = avx512 ? scale_rows_avx512 : scale_rows;
#else
  const auto task = scale_rows;
#endif
  pthreadpool_parallelize_1d_tile_1d(pool, task, &c, op.batch * op.pixels, tile_for(op.channels, 16384), 0);
}

}  // namespace etc::xnnpack
