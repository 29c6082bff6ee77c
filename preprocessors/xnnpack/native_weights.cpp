#include "preprocessors/xnnpack/native_weights.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/common/compile_error.h"
#include "runtime/backends/xnnpack/native_plan.h"

namespace etc::xnnpack {
namespace {

uint64_t numel(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

uint32_t at(const std::vector<uint32_t>& v, size_t i, uint32_t fill) { return i < v.size() ? v[i] : fill; }

// Thread counts a program may run at, and the multiply-add rates of the
// cores it may run on (native_plan.h kFmaLanesWide): a node Winograd pays
// for at any of them gets its transformed filter (or, where that is left
// to init, keeps its filter unpacked).
constexpr size_t kThreadCounts[] = {1, 2, 4, 8};
constexpr size_t kFmaLanes[] = {kFmaLanesWide, kFmaLanesNarrow};

// The shape of convolution `r` as Winograd sees it, the variant included
// (the compile spec's, else winograd_tile's); false where its input or
// output is not 4-D.
bool winograd_node_shape(const BlobWriter& blob, const NodeRecord& r, const NativePacking& packing,
                         WinogradShape& shape) {
  const std::vector<uint64_t>& x = blob.tensor(r.inputs[0]).dims;
  const std::vector<uint64_t>& y = blob.tensor(r.outputs[0]).dims;
  if (x.size() != 4 || y.size() != 4) return false;
  shape = {x[0], x[1], x[2], x[3], y[1], y[2], y[3], at(r.padding, 0, 0), at(r.padding, 3, 0)};
  shape.tile = packing.winograd_tile != 0 ? packing.winograd_tile : winograd_tile(shape);
  return true;
}

// The variant `r` runs as where it runs as Winograd (the compile spec's, or
// WinogradShape's default where its shape is unknown).
size_t winograd_node_tile(const BlobWriter& blob, const NodeRecord& r, const NativePacking& packing) {
  WinogradShape shape;
  if (!winograd_node_shape(blob, r, packing, shape) && packing.winograd_tile != 0)
    shape.tile = packing.winograd_tile;
  return shape.tile;
}

// The most threads of kThreadCounts at which `r` may run as Winograd, on
// cores of either rate: 0 where it never does, SIZE_MAX under winograd=on
// (or where its shape is unknown).
size_t winograd_threads(const BlobWriter& blob, const NodeRecord& r, const NativePacking& packing) {
  if (packing.winograd == SpecMode::kOff || r.type != fb::NodeType::Convolution2d ||
      !winograd_window(at(r.kernel, 0, 1), at(r.kernel, 1, 1), at(r.stride, 0, 1), at(r.stride, 1, 1),
                       at(r.dilation, 0, 1), at(r.dilation, 1, 1)))
    return 0;
  WinogradShape shape;
  if (packing.winograd == SpecMode::kOn || !winograd_node_shape(blob, r, packing, shape)) return SIZE_MAX;
  size_t most = 0;
  for (size_t threads : kThreadCounts)
    for (size_t lanes : kFmaLanes)
      if ((packing.fma_lanes == 0 || packing.fma_lanes == lanes) && winograd_pays(shape, threads, lanes))
        most = threads;
  return most;
}

bool may_run_winograd(const BlobWriter& blob, const NodeRecord& r, const NativePacking& packing) {
  return winograd_threads(blob, r, packing) > 0;
}

SpecMode mode(const std::string& key, const std::string& value) {
  if (value == "auto") return SpecMode::kAuto;
  if (value == "on") return SpecMode::kOn;
  if (value == "off") return SpecMode::kOff;
  throw CompileError("xnnpack: compile spec " + key + "='" + value + "' (expected auto, on or off)");
}

}  // namespace

NativePacking native_packing(std::span<const CompileSpec> specs) {
  NativePacking p;
  for (const CompileSpec& s : specs) {
    if (s.key == "prepack") {
      const std::string v = s.value_string();
      if (v != "on" && v != "panels" && v != "off")
        throw CompileError("xnnpack: compile spec prepack='" + v + "' (expected on, panels or off)");
      p.prepack = v != "off";
      p.winograd_ahead = v == "on";
    } else if (s.key == "native_convolution") {
      p.native = mode(s.key, s.value_string());
    } else if (s.key == "fma_lanes") {
      const std::string v = s.value_string();
      if (v != "any" && v != "16" && v != "32")
        throw CompileError("xnnpack: compile spec fma_lanes='" + v + "' (expected any, 16 or 32)");
      p.fma_lanes = v == "any" ? 0 : v == "16" ? kFmaLanesNarrow : kFmaLanesWide;
    } else if (s.key == "winograd") {
      const std::string v = s.value_string();
      p.winograd_tile = v == "2x2" ? 2 : v == "4x4" ? 4 : 0;
      if (p.winograd_tile != 0)
        p.winograd = SpecMode::kOn;
      else if (v == "auto" || v == "on" || v == "off")
        p.winograd = mode(s.key, v);
      else
        throw CompileError("xnnpack: compile spec winograd='" + v + "' (expected auto, on, 2x2, 4x4 or off)");
    }
  }
  return p;
}

size_t pack_native_filters(BlobWriter& blob, const NativePacking& packing) {
  if (!packing.prepack || packing.native == SpecMode::kOff) return 0;
  std::vector<int> reads(blob.num_tensors(), 0);
  for (const NodeRecord& r : blob.nodes())
    for (uint32_t t : r.inputs) ++reads[t];
  size_t packed = 0;
  for (const NodeRecord& r : blob.nodes()) {
    const bool conv = r.type == fb::NodeType::Convolution2d && r.groups == 1;
    if ((!conv && r.type != fb::NodeType::FullyConnected) || r.flags != 0 || r.inputs.size() < 2) continue;
    const uint32_t w = r.inputs[1];
    const TensorRecord& filter = blob.tensor(w);
    if (!filter.constant || filter.packing != fb::WeightPacking::Plain || reads[w] != 1 ||
        filter.dims.empty())
      continue;
    const std::vector<uint64_t>& x = blob.tensor(r.inputs[0]).dims;
    const std::vector<uint64_t>& y = blob.tensor(r.outputs[0]).dims;
    NativeGemmShape shape;
    shape.out_c = filter.dims[0];
    if (shape.out_c == 0 || (conv && shape.out_c != r.group_output_channels) || y.empty()) continue;
    shape.pixels = numel(y) / shape.out_c;
    shape.depth = numel(filter.dims) / shape.out_c;
    shape.padded_rows =
        conv && x.size() == 4 && native_padded_rows(x[3], at(r.kernel, 1, 1), at(r.dilation, 1, 1));
    const bool takes = packing.native == SpecMode::kOn || native_gemm_pays(shape, false);
    // A filter Winograd may take keeps its plain form where the transform
    // is left to init (which reads it); where preprocess writes the
    // transform too, the direct kernel's panels serve the thread counts
    // and cores it does not pay at.
    if (!takes || (!packing.winograd_ahead && may_run_winograd(blob, r, packing))) continue;
    std::vector<float> bias;
    if (r.inputs.size() > 2 && blob.tensor(r.inputs[2]).constant) bias = blob.constant_data(r.inputs[2]);
    // Packed when the blob is laid out, from the filter as it would have
    // been written, one filter at a time.
    const size_t out_c = shape.out_c, depth = shape.depth;
    blob.repack_constant(
        w, native_panels_floats(out_c, depth),
        [filter = blob.constant_fill(w), bias = std::move(bias), out_c, depth](float* out) {
          std::vector<float> plain(out_c * depth);
          filter(plain.data());
          pack_native_panels(plain.data(), bias.empty() ? nullptr : bias.data(), out_c, depth, out);
        },
        fb::WeightPacking::NativePanels);
    ++packed;
  }
  return packed;
}

size_t transform_winograd_filters(BlobWriter& blob, const NativePacking& packing) {
  if (!packing.prepack || !packing.winograd_ahead || packing.native == SpecMode::kOff ||
      packing.winograd == SpecMode::kOff)
    return 0;
  // The filters Winograd pays for at the most threads first (a program run
  // at fewer threads reads the others too): whatever the thread count, the
  // filters it reads lie together, apart from those it does not (Linux may
  // map a cached file's pages up to 2 MiB at a time on a fault, and unread
  // pages so mapped count in resident memory).
  std::vector<std::pair<size_t, size_t>> order;  // (threads, node)
  for (size_t n = 0; n < blob.nodes().size(); ++n) {
    const NodeRecord& r = blob.nodes()[n];
    if (r.type != fb::NodeType::Convolution2d || r.groups != 1 || r.flags != 0 || r.inputs.size() < 2)
      continue;
    const TensorRecord& filter = blob.tensor(r.inputs[1]);
    if (!filter.constant || filter.packing != fb::WeightPacking::Plain || filter.dims.size() != 4 ||
        filter.dims[1] != 3 || filter.dims[2] != 3)
      continue;
    if (const size_t threads = winograd_threads(blob, r, packing); threads > 0)
      order.emplace_back(threads, n);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [threads, n] : order) {
    NodeRecord& r = blob.nodes()[n];
    const uint32_t w = r.inputs[1];
    const std::vector<uint64_t> dims = blob.tensor(w).dims;
    const size_t out_c = dims[0], in_c = dims[3];
    const size_t tile = winograd_node_tile(blob, r, packing);
    r.winograd_filter = static_cast<int32_t>(blob.add_packed_constant(
        dims, winograd_filter_floats(out_c, in_c, tile),
        [plain = blob.constant_fill(w), out_c, in_c, tile](float* out) {
          std::vector<float> g(out_c * 9 * in_c);
          plain(g.data());
          transform_winograd_filter(g.data(), out_c, in_c, tile, out);
        },
        winograd_packing(tile)));
  }
  return order.size();
}

}  // namespace etc::xnnpack
