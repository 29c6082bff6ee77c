#include "runtime/backends/xnnpack/native_conv.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "runtime/backends/xnnpack/native_conv_state.h"
#include "runtime/backends/xnnpack/native_isa.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {
namespace {

constexpr size_t kRows = kNativeGemmRows;          // output pixels per micro-kernel call
constexpr size_t kChannels = kNativeGemmChannels;  // output channels per panel
// The most a padded-row convolution's zero-bordered copy of one band takes:
// a few hundred KiB, well inside a core's cache.
constexpr size_t kPaddedBandBytes = size_t{256} << 10;
}  // namespace

NativeEpilogue& epilogue(NativeConv& conv) { return conv; }

void NativeConvDeleter::operator()(NativeConv* conv) const { delete conv; }

AlignedBuffer zeroed_floats(size_t count) {
  const size_t bytes = (count * sizeof(float) + AlignedBuffer::kAlignment - 1) / AlignedBuffer::kAlignment *
                       AlignedBuffer::kAlignment;
  AlignedBuffer b = AlignedBuffer::allocate(bytes);
  if (b) std::memset(b.data(), 0, bytes);
  return b;
}

bool uses_padded_rows(const BlobView& view, const fb::Node& node) {
  if (node.type() != fb::NodeType::Convolution2d) return false;
  return native_padded_rows(view.tensors[node.inputs()->Get(0)].dims[3], node_param(node.kernel(), 1, 1),
                            node_param(node.dilation(), 1, 1));
}

namespace {

NativeGemmShape gemm_shape(const BlobView& view, const fb::Node& node) {
  const TensorInfo& y = view.tensors[node.outputs()->Get(0)];
  const TensorInfo& w = view.tensors[node.inputs()->Get(1)];
  NativeGemmShape s;
  s.out_c = node.type() == fb::NodeType::FullyConnected ? y.dims[y.rank - 1] : node.group_output_channels();
  if (s.out_c == 0) return s;
  s.pixels = y.numel / s.out_c;
  s.depth = w.numel / s.out_c;  // taps x input channels
  s.padded_rows = uses_padded_rows(view, node);
  return s;
}

}  // namespace

bool can_run_natively(const fb::Node& node) {
  if (node.flags() != 0) return false;
  return (node.type() == fb::NodeType::Convolution2d && node.groups() == 1) ||
         node.type() == fb::NodeType::FullyConnected;
}

bool runs_natively(const BlobView& view, const fb::Node& node, bool folds_activation) {
  if (!can_run_natively(node)) return false;
  const GemmRival rival =
      native_isa() == NativeIsa::kAvx2 ? GemmRival::kXnnpackAvx2 : GemmRival::kXnnpackAvx512;
  return native_gemm_pays(gemm_shape(view, node), folds_activation, rival);
}

size_t winograd_tile_of(const NativeConv& conv) {
  return conv.winograd != nullptr ? winograd_shape(*conv.winograd).tile : 0;
}

std::span<const float> weights_read_in_place(const NativeConv& conv) {
  return conv.winograd != nullptr ? winograd_weights_in_place(*conv.winograd) : std::span<const float>();
}

Status read_input_as_nchw(NativeConv& conv) {
  if (!conv.padded_rows || conv.winograd != nullptr)
    return fail(Error::Internal, "xnnpack: only a padded-row convolution reads an NCHW input");
  conv.nchw_input = true;
  return Status::Ok();
}

Status scale_input(NativeConv& conv, uint32_t x, uint32_t s) {
  if (conv.winograd != nullptr)
    return fail(Error::Internal, "xnnpack: a Winograd convolution cannot scale its input");
  conv.input = x;
  conv.input_scale = s;
  return Status::Ok();
}

size_t padded_band_bytes(const NativeConv& conv) { return conv.padded.size(); }

size_t scaled_weights_floats(const NativeConv& conv) {
  return conv.input_scale >= 0 ? conv.panels * conv.panel_floats : 0;
}

void share_scaled_weights(NativeConv& conv, float* memory) {
  conv.scaled = memory;
  conv.weights = memory;
}

size_t winograd_scratch_floats(const NativeConv& conv) {
  return conv.winograd != nullptr ? winograd_scratch_floats(*conv.winograd) : 0;
}

void share_winograd_scratch(NativeConv& conv, float* memory) {
  if (conv.winograd != nullptr) share_winograd_scratch(*conv.winograd, memory);
}

Result<NativeConvPtr> compile_native_conv(const BlobView& view, const fb::Node& node,
                                          const NativeConvOptions& options) {
  NativeConvPtr conv(new NativeConv);
  NativeConv& c = *conv;
  c.input = node.inputs()->Get(0);
  c.output = node.outputs()->Get(0);
  const TensorInfo& x = view.tensors[c.input];
  const TensorInfo& y = view.tensors[c.output];
  if (node.type() == fb::NodeType::FullyConnected) {
    // A 1x1 convolution over the rows of x: [rows, K] -> [rows, N].
    c.in_c = x.dims[x.rank - 1], c.out_c = y.dims[y.rank - 1];
    c.batch = 1, c.in_h = c.out_h = x.numel / c.in_c, c.in_w = c.out_w = 1;
  } else {
    c.batch = x.dims[0], c.in_h = x.dims[1], c.in_w = x.dims[2], c.in_c = x.dims[3];
    c.out_h = y.dims[1], c.out_w = y.dims[2], c.out_c = y.dims[3];
  }
  c.kernel_h = c.kernel_w = 1;
  if (node.type() == fb::NodeType::Convolution2d) {
    // A fully connected node has no window: whatever these fields of its
    // blob node hold (check_node reads them only for convolutions), it
    // keeps a 1x1 one, stride 1, no padding.
    c.kernel_h = node_param(node.kernel(), 0, 1), c.kernel_w = node_param(node.kernel(), 1, 1);
    c.stride_h = node_param(node.stride(), 0, 1), c.stride_w = node_param(node.stride(), 1, 1);
    c.dilation_h = node_param(node.dilation(), 0, 1), c.dilation_w = node_param(node.dilation(), 1, 1);
    c.pad_top = node_param(node.padding(), 0, 0), c.pad_left = node_param(node.padding(), 3, 0);
  }
  c.lo = node.output_min(), c.hi = node.output_max();
  c.out_stride = c.out_c;

  // The filter is OHWI, [out_c][taps][in_c], or packed ahead of time in
  // the kernel's panels (native_plan.h).
  const TensorInfo& filter_info = view.tensors[node.inputs()->Get(1)];
  const auto* filter = reinterpret_cast<const float*>(filter_info.constant);
  const bool prepacked = filter_info.packing == fb::WeightPacking::NativePanels;
  const float* bias = node.inputs()->size() > 2
                          ? reinterpret_cast<const float*>(view.tensors[node.inputs()->Get(2)].constant)
                          : nullptr;
  const size_t k_total = c.kernel_h * c.kernel_w * c.in_c;
  // Panels packed ahead of time carry the bias XNNPACK and Winograd take
  // from the bias tensor: the two must agree, so the result does not depend
  // on the CPU. Checked where the panels are read (not where Winograd runs
  // from its own transform: the panels' pages then stay unmapped).
  const auto check_panel_bias = [&]() -> Status {
    const size_t panel_floats = kChannels + k_total * kChannels;
    for (size_t o = 0; o < c.out_c; ++o) {
      const float want = bias != nullptr ? bias[o] : 0.0f;
      const float got = filter[(o / kChannels) * panel_floats + o % kChannels];
      if (std::memcmp(&want, &got, sizeof(float)) != 0)
        return fail(Error::InvalidProgram, "xnnpack: invalid blob: tensor ",
                    std::to_string(node.inputs()->Get(1)), ": packed bias of output channel ",
                    std::to_string(o), " differs from the bias tensor");
    }
    return Status::Ok();
  };
  if (options.winograd != WinogradMode::kOff && winograd_applies(node)) {
    // The variant: the one the compile spec names, else the one the filter
    // was transformed for ahead of time (checked by the blob reader: the
    // filter's dims, a Winograd packing), else the one the shape takes.
    const TensorInfo* form =
        node.winograd_filter() >= 0 ? &view.tensors[static_cast<size_t>(node.winograd_filter())] : nullptr;
    const size_t form_tile = form != nullptr ? winograd_packing_tile(form->packing) : 0;
    WinogradShape shape{c.batch, c.in_h, c.in_w, c.in_c, c.out_h, c.out_w, c.out_c, c.pad_top, c.pad_left};
    shape.tile = options.winograd == WinogradMode::kOn2x2   ? 2
                 : options.winograd == WinogradMode::kOn4x4 ? 4
                 : form_tile != 0                           ? form_tile
                                                            : winograd_tile(shape);
    if (form_tile != shape.tile) form = nullptr;
    if (options.winograd != WinogradMode::kAuto || winograd_pays(shape, options.threads, core_fma_lanes())) {
      // Packed for the direct kernel and not transformed ahead of time
      // (Winograd pays at this thread count but did not where it was
      // compiled): the transform reads OHWI.
      std::vector<float> unpacked;
      if (prepacked && form == nullptr) {
        ETC_TRY(check_panel_bias());
        try {
          unpacked.resize(c.out_c * k_total);
        } catch (const std::bad_alloc&) {
          return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot unpack convolution weights");
        }
        unpack_native_panels(filter, c.out_c, k_total, unpacked.data());
        filter = unpacked.data();
      }
      // Transformed ahead of time, or here.
      const float* transformed = form != nullptr ? reinterpret_cast<const float*>(form->constant) : nullptr;
      ETC_ASSIGN_OR_RETURN(c.winograd, compile_winograd(shape, filter, transformed, bias, options.threads));
      return conv;
    }
  }

  c.panels = (c.out_c + kChannels - 1) / kChannels;
  c.panel_floats = kChannels + c.taps() * c.in_c * kChannels;
  c.zeros = zeroed_floats(c.in_c);
  if (!prepacked) c.packed = zeroed_floats(c.panels * c.panel_floats);
  if ((!prepacked && !c.packed) || !c.zeros)
    return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot allocate packed convolution weights");
  if (!prepacked) pack_native_panels(filter, bias, c.out_c, k_total, c.packed.as<float>());
  if (prepacked) ETC_TRY(check_panel_bias());
  // Prepacked weights are read in place, from the blob.
  c.panels_data = prepacked ? filter : c.packed.as<float>();
  c.weights = c.panels_data;
  c.tiles = (c.pixels() + kRows - 1) / kRows;
  c.padded_rows = uses_padded_rows(view, node);
  if (!c.padded_rows) c.split = native_depth_split(c.taps(), c.in_c, c.tiles, core_cache_bytes());
  if (c.rows_contiguous()) return conv;
  if (c.padded_rows) {
    c.padded_h = c.in_h + c.pad_top + node_param(node.padding(), 2, 0);
    c.padded_w = c.in_w + c.pad_left + node_param(node.padding(), 1, 0);
    // As many output rows per band as keep the band's padded input within
    // kPaddedBandBytes (at least one).
    const size_t row_bytes = c.padded_w * c.in_c * sizeof(float);
    const size_t window = (c.kernel_h - 1) * c.dilation_h + 1;
    const size_t fit = std::max<size_t>(kPaddedBandBytes / row_bytes, window);
    c.band_rows = std::min(c.out_h, (fit - window) / c.stride_h + 1);
    c.band_padded_rows = (c.band_rows - 1) * c.stride_h + window;
    c.padded = zeroed_floats(c.band_padded_rows * c.padded_w * c.in_c);
    if (!c.padded)
      return fail(Error::DelegateMemoryAllocationFailed,
                  "xnnpack: cannot allocate a padded convolution input");
    c.tiles = (c.band_rows * c.out_w + kRows - 1) / kRows;
  }
  // One pointer per tile, tap and row: refused rather than thrown when a
  // blob's convolution would need more than 2^31 of them.
  size_t entries = 0;
  if (__builtin_mul_overflow(c.tiles, c.kernel_taps() * kRows, &entries) || entries > (size_t{1} << 31))
    return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: a native convolution would need ",
                std::to_string(c.tiles), " x ", std::to_string(c.kernel_taps() * kRows),
                " input row pointers");
  try {
    c.indirection.resize(entries);
  } catch (const std::bad_alloc&) {
    return fail(Error::DelegateMemoryAllocationFailed, "xnnpack: cannot allocate ", std::to_string(entries),
                " input row pointers for a native convolution");
  }
  if (c.padded_rows) build_band_indirection(c);
  return conv;
}

uint32_t input_tensor(const NativeConv& conv) { return conv.input; }

bool is_pointwise(const NativeConv& conv) {
  return conv.winograd == nullptr && !conv.padded_rows && conv.input_scale < 0 && conv.pointwise_window();
}

}  // namespace etc::xnnpack
