#include "runtime/backends/xnnpack/native_deconv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/backends/xnnpack/native_conv.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {

namespace {

constexpr size_t kRows = kNativeGemmRows;          // input pixels per micro-kernel call
constexpr size_t kChannels = kNativeGemmChannels;  // columns per panel

}  // namespace

struct NativeDeconv {
  uint32_t input = 0, output = 0;
  size_t batch = 0, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0;
  size_t kernel_h = 1, kernel_w = 1;
  float lo = -INFINITY, hi = INFINITY;
  // One set of panels per tap, each a 1x1 convolution over the input; or,
  // with taps_packed (taps x output channels <= 32), one panel whose column
  // t * out_c + o is channel o of tap t.
  bool taps_packed = false;
  size_t panels = 0, panel_floats = 0;
  AlignedBuffer packed;  // per panel: 32 biases, then in_c x 32 weights

  size_t taps() const { return kernel_h * kernel_w; }
};

void NativeDeconvDeleter::operator()(NativeDeconv* deconv) const { delete deconv; }

bool deconv_runs_natively(const fb::Node& node) {
  if (node.type() != fb::NodeType::Deconvolution2d || node.flags() != 0 || node.groups() != 1) return false;
  const auto all = [](const flatbuffers::Vector<uint32_t>* v, uint32_t want) {
    return v == nullptr || std::all_of(v->begin(), v->end(), [&](uint32_t d) { return d == want; });
  };
  return node_param(node.kernel(), 0, 1) == node_param(node.stride(), 0, 1) &&
         node_param(node.kernel(), 1, 1) == node_param(node.stride(), 1, 1) && all(node.padding(), 0) &&
         all(node.adjustment(), 0) && all(node.dilation(), 1) && native_convolution_available();
}

Result<NativeDeconvPtr> compile_native_deconv(const BlobView& view, const fb::Node& node) {
  NativeDeconvPtr deconv(new NativeDeconv);
  NativeDeconv& c = *deconv;
  c.input = node.inputs()->Get(0);
  c.output = node.outputs()->Get(0);
  const TensorInfo &x = view.tensors[c.input], &y = view.tensors[c.output];
  c.batch = x.dims[0], c.in_h = x.dims[1], c.in_w = x.dims[2], c.in_c = x.dims[3];
  c.out_h = y.dims[1], c.out_w = y.dims[2], c.out_c = y.dims[3];
  c.kernel_h = node_param(node.kernel(), 0, 1), c.kernel_w = node_param(node.kernel(), 1, 1);
  c.lo = node.output_min(), c.hi = node.output_max();
  if (c.out_h != c.in_h * c.kernel_h || c.out_w != c.in_w * c.kernel_w)
    return fail(Error::Internal,
                "xnnpack: a native deconvolution's output is not its input times its kernel");
  // The filter is OHWI: [out_c][kernel_h][kernel_w][in_c].
  const auto* filter = reinterpret_cast<const float*>(view.tensors[node.inputs()->Get(1)].constant);
  const float* bias = node.inputs()->size() > 2
                          ? reinterpret_cast<const float*>(view.tensors[node.inputs()->Get(2)].constant)
                          : nullptr;
  c.taps_packed = c.taps() * c.out_c <= kChannels;
  c.panels = c.taps_packed ? 1 : (c.out_c + kChannels - 1) / kChannels;
  c.panel_floats = kChannels + c.in_c * kChannels;
  c.packed = zeroed_floats((c.taps_packed ? 1 : c.taps()) * c.panels * c.panel_floats);
  if (!c.packed)
    return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot allocate deconvolution weights");
  // Column j of `panel`: output channel o of tap `tap`.
  const auto pack = [&](float* panel, size_t j, size_t tap, size_t o) {
    if (bias != nullptr) panel[j] = bias[o];
    const float* row = filter + (o * c.taps() + tap) * c.in_c;
    for (size_t k = 0; k < c.in_c; ++k) panel[kChannels + k * kChannels + j] = row[k];
  };
  for (size_t t = 0; t < c.taps(); ++t)
    for (size_t o = 0; o < c.out_c; ++o) {
      if (c.taps_packed) {
        pack(c.packed.as<float>(), t * c.out_c + o, t, o);
      } else {
        const size_t p = o / kChannels;
        pack(c.packed.as<float>() + (t * c.panels + p) * c.panel_floats, o % kChannels, t, o);
      }
    }
  return deconv;
}

namespace {

struct DeconvTask {
  const NativeDeconv* deconv;
  const float* x;
  float* y;
};

// Row pointers of input pixels [j, j + count) of one input row; the rest
// repeat the last (their results are not stored).
void tile_rows(const NativeDeconv& c, const float* in_row, size_t j, size_t count, const float** rows) {
  for (size_t r = 0; r < kRows; ++r) rows[r] = in_row + (j + std::min(r, count - 1)) * c.in_c;
}

// Input row `row` (of all images) for tap `tap`: each tile of 12 input
// pixels times the tap's panels, stored kernel_w pixels apart into output
// row kernel_h * row + a, from column b.
void row_tap(void* context, size_t row, size_t tap) {
  const auto& [deconv, x, y] = *static_cast<const DeconvTask*>(context);
  const NativeDeconv& c = *deconv;
  const size_t a = tap / c.kernel_w, b = tap % c.kernel_w;
  const size_t n = row / c.in_h, i = row % c.in_h;
  const float* in_row = x + row * c.in_w * c.in_c;
  float* out_row = y + ((n * c.out_h + i * c.kernel_h + a) * c.out_w + b) * c.out_c;
  const size_t y_stride = c.kernel_w * c.out_c;
  const float* rows[kRows];
  for (size_t j = 0; j < c.in_w; j += kRows) {
    const size_t count = std::min(kRows, c.in_w - j);
    tile_rows(c, in_row, j, count, rows);
    for (size_t p = 0; p < c.panels; ++p)
      native_gemm_panel(count, std::min(kChannels, c.out_c - p * kChannels), c.in_c, rows,
                        c.packed.as<float>() + (tap * c.panels + p) * c.panel_floats,
                        out_row + j * y_stride + p * kChannels, y_stride, c.lo, c.hi);
  }
}

// Input row `row` with every tap in one panel (taps_packed): each tile's
// results into a 12 x 32 scratch, then each tap's out_c floats to its pixel.
void row_packed(void* context, size_t row) {
  const auto& [deconv, x, y] = *static_cast<const DeconvTask*>(context);
  const NativeDeconv& c = *deconv;
  const size_t n = row / c.in_h, i = row % c.in_h;
  const float* in_row = x + row * c.in_w * c.in_c;
  alignas(64) float scratch[kRows * kChannels];
  const float* rows[kRows];
  for (size_t j = 0; j < c.in_w; j += kRows) {
    const size_t count = std::min(kRows, c.in_w - j);
    tile_rows(c, in_row, j, count, rows);
    native_gemm_panel(count, c.taps() * c.out_c, c.in_c, rows, c.packed.as<float>(), scratch, kChannels, c.lo,
                      c.hi);
    for (size_t r = 0; r < count; ++r)
      for (size_t t = 0; t < c.taps(); ++t) {
        const size_t a = t / c.kernel_w, b = t % c.kernel_w;
        float* out = y + ((n * c.out_h + i * c.kernel_h + a) * c.out_w + (j + r) * c.kernel_w + b) * c.out_c;
        std::memcpy(out, scratch + r * kChannels + t * c.out_c, c.out_c * sizeof(float));
      }
  }
}

}  // namespace

void run_native_deconv(const NativeDeconv& deconv, float* const* data, pthreadpool_t pool) {
  DeconvTask task{&deconv, data[deconv.input], data[deconv.output]};
  if (deconv.taps_packed)
    pthreadpool_parallelize_1d(pool, row_packed, &task, deconv.batch * deconv.in_h, 0);
  else
    pthreadpool_parallelize_2d(pool, row_tap, &task, deconv.batch * deconv.in_h, deconv.taps(), 0);
}

}  // namespace etc::xnnpack
