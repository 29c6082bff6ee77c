#pragma once
// Filters packed ahead of time for the XNNPACK backend's own GEMM kernel
// (runtime/backends/xnnpack/native_plan.h): the runtime reads them in place
// from the program instead of packing them at init, and unpacks them only
// where XNNPACK runs the node after all (a CPU without AVX-512F, or a
// decision that depends on the running machine).

#include <span>

#include "compiler/ir/compile_spec.h"
#include "preprocessors/xnnpack/blob_writer.h"

namespace etc::xnnpack {

enum class SpecMode { kAuto, kOn, kOff };

// The compile specs this pass reads: "prepack" (on, the default: filters
// packed and transformed for Winograd; panels: packed only, a smaller
// program whose Winograd filters the runtime transforms at init; off),
// "native_convolution" (auto, on, off) and "winograd" (auto, on, off, or
// 2x2 or 4x4: on, as that variant) as the runtime reads them; and
// "fma_lanes" (any, the default, 16 or 32: the multiply-adds a cycle of
// the cores the program is for, native_plan.h kFmaLanesWide; under any,
// filters are transformed for Winograd where it pays on cores of either
// rate; a runtime on cores of a rate left out transforms at init those it
// pays for there). Throws CompileError for another value.
struct NativePacking {
  bool prepack = true;
  bool winograd_ahead = true;
  SpecMode native = SpecMode::kAuto;
  SpecMode winograd = SpecMode::kAuto;
  size_t winograd_tile = 0;  // 2 or 4 under winograd=2x2 or 4x4
  size_t fma_lanes = 0;      // 16 or 32 under fma_lanes=16 or 32; 0: either
};
NativePacking native_packing(std::span<const CompileSpec> specs);

// Packs the filter of each one-group convolution and fully connected node
// the runtime's kernel takes on a CPU with AVX-512F (native_gemm_pays, or
// every one it can run under native_convolution=on), unless another node
// reads the same filter, or the node may run as Winograd and its transform
// is left to init (prepack=panels: the transform reads the filter
// unpacked). Runs after transform_winograd_filters, which reads the plain
// filters. On a CPU with AVX2 alone the kernel takes
// some shallower ones too (native_plan.h GemmRival); it packs those at
// init. Returns how many filters it packed.
size_t pack_native_filters(BlobWriter& blob, const NativePacking& packing);

// Transforms ahead of time the filter of each convolution that may run as
// Winograd (as above: at one of the thread counts a program commonly runs
// at, or every one Winograd applies to under winograd=on), for the variant
// it runs as (native_plan.h winograd_tile, or the compile spec's), unless
// prepack is panels or off, or native_convolution or winograd is off: a
// WinogradPanels or WinogradPanels2x2 constant added after all the others
// (a tensor id past every other), which the node names as its
// winograd_filter. The filter stays, for XNNPACK and the direct kernel
// (packed for the latter by pack_native_filters, where it pays), at the
// thread counts and on the cores Winograd does not pay at. Returns how
// many filters it transformed.
size_t transform_winograd_filters(BlobWriter& blob, const NativePacking& packing);

}  // namespace etc::xnnpack
