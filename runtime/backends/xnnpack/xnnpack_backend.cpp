#include "runtime/backends/xnnpack/xnnpack_backend.h"

#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/backends/xnnpack/blob_resize.h"
#include "runtime/backends/xnnpack/delegate_handle.h"
#include "runtime/backends/xnnpack/instance.h"
#include "runtime/backends/xnnpack/layout.h"
#include "runtime/backends/xnnpack/run_stages.h"
#include "runtime/backends/xnnpack/stages.h"
#include "runtime/backends/xnnpack/subgraph_builder.h"
#include "runtime/backends/xnnpack/work_estimate.h"
#include "runtime/core/log.h"

namespace etc::xnnpack {
namespace {

std::string describe(const Argument& arg) {
  std::string dims = dims_string(arg.tensor);
  if (arg.tensor.layout != fb::BoundaryLayout::Same)
    dims = "[" + std::to_string(arg.tensor.dims[0]) + ", " + std::to_string(arg.tensor.dims[3]) + ", " +
           std::to_string(arg.tensor.dims[1]) + ", " + std::to_string(arg.tensor.dims[2]) + "] (NCHW)";
  return std::string("xnnpack: ") + (arg.is_input ? "input " : "output ") + std::to_string(arg.index) +
         ": expected float32 " + dims + ", " + std::to_string(arg.tensor.numel) + " elements";
}

// The value of compile spec `key` (the last one given wins) as its index in
// `values`; 0 when absent; InvalidArgument, naming the values, for another.
Result<size_t> choice_spec(Span<const CompileSpecView> specs, std::string_view key,
                           std::initializer_list<std::string_view> values) {
  size_t choice = 0;
  for (const CompileSpecView& spec : specs) {
    if (spec.key != key) continue;
    const std::string value(reinterpret_cast<const char*>(spec.value.data()), spec.value.size());
    const auto* found = std::find(values.begin(), values.end(), value);
    if (found == values.end()) {
      std::string expected;
      for (const std::string_view* v = values.begin(); v != values.end(); ++v)
        expected += (v == values.begin()     ? "'"
                     : v + 1 == values.end() ? " or '"
                                             : ", '") +
                    std::string(*v) + "'";
      return fail(Error::InvalidArgument, "xnnpack: compile spec ", key, " is '", value, "', expected ",
                  expected);
    }
    choice = static_cast<size_t>(found - values.begin());
  }
  return choice;
}

enum class AutoOnOff { kAuto, kOn, kOff };

// The value of an "auto" | "on" | "off" compile spec named `key`; kAuto
// when absent.
Result<AutoOnOff> auto_on_off_spec(Span<const CompileSpecView> specs, std::string_view key) {
  ETC_ASSIGN_OR_RETURN(const size_t choice, choice_spec(specs, key, {"auto", "on", "off"}));
  return static_cast<AutoOnOff>(choice);
}

// Compile spec "native_convolution": "auto" (the default) runs the
// one-group convolutions that gain from it on the backend's own kernel
// (native_conv.h runs_natively), "on" runs every one-group convolution there,
// "off" keeps every convolution on XNNPACK. Without AVX-512F or AVX2 + FMA3
// all stay on XNNPACK (native_conv.h native_isa).
Result<NativeConvolutions> native_convolution_spec(Span<const CompileSpecView> specs) {
  ETC_ASSIGN_OR_RETURN(const AutoOnOff value, auto_on_off_spec(specs, "native_convolution"));
  if (!native_convolution_available()) return NativeConvolutions::kOff;
  switch (value) {
    case AutoOnOff::kAuto: return NativeConvolutions::kAuto;
    case AutoOnOff::kOn: return NativeConvolutions::kAll;
    case AutoOnOff::kOff: break;
  }
  return NativeConvolutions::kOff;
}

// Compile spec "winograd": "auto" (the default) runs a native 3x3
// stride-1 convolution as Winograd where the cost model says it gains
// (native_plan.h winograd_pays), as F(4x4, 3x3) or F(2x2, 3x3)
// (winograd_tile, or as its filter was transformed ahead of time); "on"
// runs every such native convolution so; "2x2" and "4x4" every one as that
// variant; "off" none.
Result<WinogradMode> winograd_spec(Span<const CompileSpecView> specs) {
  ETC_ASSIGN_OR_RETURN(const size_t choice,
                       choice_spec(specs, "winograd", {"auto", "on", "2x2", "4x4", "off"}));
  constexpr WinogradMode kModes[] = {WinogradMode::kAuto, WinogradMode::kOn, WinogradMode::kOn2x2,
                                     WinogradMode::kOn4x4, WinogradMode::kOff};
  return kModes[choice];
}

// Whether `handle` was created for delegate inputs of these blob dims.
bool has_input_dims(const XnnpackHandle& handle, const std::vector<BlobDims>& dims) {
  size_t k = 0;
  for (const Argument& arg : handle.args) {
    if (!arg.is_input) continue;
    if (k >= dims.size() ||
        !std::equal(dims[k].begin(), dims[k].end(), arg.tensor.dims, arg.tensor.dims + arg.tensor.rank))
      return false;
    ++k;
  }
  return k == dims.size();
}

// The backend's DelegateHandle: the instance that runs, and for a method
// whose inputs may change size, what other sizes are derived from.
struct XnnpackDelegate {
  // Instances at the sizes used most recently, most recent first: the one
  // that runs, then those alternating sizes come back to; at most kMaxSizes.
  static constexpr size_t kMaxSizes = 4;
  std::vector<std::unique_ptr<XnnpackHandle>> sizes;
  XnnpackHandle& active() const { return *sizes.front(); }
  // Resizable only: the blob as compiled (the largest sizes), which stays
  // alive with the method, and the options instances are created with.
  const void* blob = nullptr;
  size_t blob_size = 0;
  bool resizable = false;      // the method may resize it (else the blob is kept for its weights only)
  AlignedBuffer aligned_copy;  // the blob, when it was not aligned
  InstanceOptions options;
};

// The blob dims (NHWC for an input converted from NCHW) of the tensor an
// argument holds.
Result<BlobDims> argument_dims(const Argument& arg, const EValue* value) {
  if (value == nullptr || !value->is_tensor() || value->to_tensor().dtype() != DType::Float32)
    return fail(Error::InvalidArgument, "xnnpack: input ", std::to_string(arg.index),
                " is not a float32 tensor");
  const Shape& shape = value->to_tensor().shape();
  if (static_cast<size_t>(shape.rank()) != arg.tensor.rank)
    return fail(Error::InvalidArgument, "xnnpack: input ", std::to_string(arg.index), " has rank ",
                std::to_string(shape.rank()), ", the delegate was compiled for rank ",
                std::to_string(arg.tensor.rank));
  BlobDims dims;
  for (int64_t d : shape) {
    if (d <= 0)
      return fail(Error::InvalidArgument, "xnnpack: input ", std::to_string(arg.index), " is empty");
    dims.push_back(static_cast<uint64_t>(d));
  }
  if (arg.tensor.layout == fb::BoundaryLayout::NchwToNhwc) dims = {dims[0], dims[2], dims[3], dims[1]};
  return dims;
}

// `blob` (the delegate's, as compiled) with its inputs at `dims`, as an
// instance.
Result<std::unique_ptr<XnnpackHandle>> create_resized(const XnnpackDelegate& d,
                                                      const std::vector<BlobDims>& dims) {
  std::unique_ptr<fb::GraphT> graph(fb::GetSizePrefixedGraph(d.blob)->UnPack());
  ETC_TRY(resize_graph(*graph, dims));
  flatbuffers::FlatBufferBuilder fbb;
  fbb.FinishSizePrefixed(fb::Graph::Pack(fbb, graph.get()), kXnnpackBlobIdentifier);
  AlignedBuffer flatbuffer = AlignedBuffer::allocate(fbb.GetSize());
  if (!flatbuffer) return out_of_memory("the resized blob");
  std::memcpy(flatbuffer.data(), fbb.GetBufferPointer(), fbb.GetSize());
  ETC_ASSIGN_OR_RETURN(
      BlobView view,
      read_xnnpack_graph(flatbuffer.data(), fbb.GetSize(),
                         xnnpack_constant_data(static_cast<const uint8_t*>(d.blob), d.blob_size)));
  return create_instance(view, d.options);
}

// Each output argument's spec from the active instance's dims.
void set_output_specs(const XnnpackHandle& handle, Span<EValue*> args) {
  for (size_t a = 0; a < handle.args.size(); ++a) {
    const Argument& arg = handle.args[a];
    if (arg.is_input) continue;
    Shape shape;
    for (size_t k = 0; k < arg.tensor.rank; ++k) shape.push_back(static_cast<int64_t>(arg.tensor.dims[k]));
    if (arg.tensor.layout == fb::BoundaryLayout::NhwcToNchw) shape = {shape[0], shape[3], shape[1], shape[2]};
    args[a]->to_tensor().spec = TensorSpec{DType::Float32, shape};
  }
}

class XnnpackBackend final : public BackendInterface {
 public:
  bool is_available() const override { return xnn_initialize(packing_allocator()) == xnn_status_success; }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpecView> compile_specs) const override {
    if (xnn_status s = xnn_initialize(packing_allocator()); s != xnn_status_success)
      return fail(Error::DelegateUnavailable, "xnnpack: XNNPACK cannot run on this CPU (", xnn_status_name(s),
                  ")");
    if (processed == nullptr || processed->data() == nullptr)
      return fail(Error::InvalidArgument, "xnnpack: no processed bytes");
    auto delegate = std::make_unique<XnnpackDelegate>();
    // The flatbuffer holds 8-byte scalars; a blob placed at a less aligned
    // address (e.g. inline in the program) is read from an aligned copy.
    const void* blob = processed->data();
    if (reinterpret_cast<uintptr_t>(blob) % kBlobAlignment != 0) {
      delegate->aligned_copy = AlignedBuffer::allocate(processed->size());
      if (!delegate->aligned_copy) return out_of_memory("an aligned copy of the blob");
      std::memcpy(delegate->aligned_copy.data(), blob, processed->size());
      blob = delegate->aligned_copy.data();
    }
    ETC_ASSIGN_OR_RETURN(BlobView view, read_xnnpack_blob(blob, processed->size()));
    InstanceOptions& options = delegate->options;
    ETC_ASSIGN_OR_RETURN(options.convolutions, native_convolution_spec(compile_specs));
    ETC_ASSIGN_OR_RETURN(options.winograd, winograd_spec(compile_specs));
    options.detail = context.options().delegate_detail;
    // A resizable delegate may run at larger sizes than its blob's: it keeps
    // the threads asked for.
    const int requested = context.options().num_threads;
    int threads = requested;
    if (context.options().fit_threads_to_work && !context.may_resize()) {
      const uint64_t flops = estimated_flops(view);
      threads = threads_worth_using(flops, requested);
      if (threads != requested)
        ETC_LOG(Info,
                "xnnpack: %llu floating-point operations a run, fewer than the %llu a second thread pays "
                "for: the delegate runs on the calling thread",
                static_cast<unsigned long long>(flops),
                static_cast<unsigned long long>(kFlopsWorthASecondThread));
    }
    options.num_threads = static_cast<size_t>(threads);
    ETC_ASSIGN_OR_RETURN(std::unique_ptr<XnnpackHandle> handle, create_instance(view, options));
    std::vector<std::pair<const uint8_t*, const uint8_t*>> reads = handle->blob_reads;
    delegate->sizes.push_back(std::move(handle));
    if (context.may_resize() || !reads.empty()) {
      // Other sizes are derived from the blob, or prepacked weights are
      // read from it in place: it stays with the method (or its aligned
      // copy with the delegate, and the processed bytes can go).
      delegate->blob = blob;
      delegate->blob_size = processed->size();
      delegate->resizable = context.may_resize();
      if (delegate->aligned_copy) {
        processed->free();
      } else if (!context.may_resize()) {
        // Only the prepacked weights are read again: the rest of the
        // blob's pages can leave resident memory.
        std::sort(reads.begin(), reads.end());
        const auto* at = static_cast<const uint8_t*>(blob);
        for (const auto& [begin, end] : reads) {
          if (begin > at) processed->release_part(at, static_cast<size_t>(begin - at));
          at = std::max(at, end);
        }
        const auto* blob_end = static_cast<const uint8_t*>(blob) + processed->size();
        if (blob_end > at) processed->release_part(at, static_cast<size_t>(blob_end - at));
      }
    } else {
      // Weights are packed and run-time constants copied: the blob is no
      // longer needed.
      delegate->aligned_copy = AlignedBuffer();
      processed->free();
    }
    return static_cast<DelegateHandle*>(delegate.release());
  }

  Status execute(BackendExecutionContext& context, DelegateHandle* opaque,
                 Span<EValue*> args) const override {
    if (opaque == nullptr) return fail(Error::DelegateInvalidHandle, "xnnpack: null handle");
    XnnpackHandle& handle = static_cast<XnnpackDelegate*>(opaque)->active();
    if (args.size() != handle.args.size())
      return fail(Error::InvalidArgument, "xnnpack: ", std::to_string(args.size()), " arguments, expected ",
                  std::to_string(handle.args.size()));
    for (size_t a = 0; a < args.size(); ++a) {
      const Argument& arg = handle.args[a];
      const EValue* value = args[a];
      if (value == nullptr || !value->is_tensor() || value->to_tensor().dtype() != DType::Float32 ||
          value->to_tensor().numel() != static_cast<int64_t>(arg.tensor.numel) ||
          value->to_tensor().data == nullptr)
        return fail(Error::InvalidArgument, describe(arg));
      if (arg.staging == nullptr) handle.data[arg.tensor_id] = value->to_tensor().data_as<float>();
    }
    for (size_t a = 0; a < args.size(); ++a) {
      const Argument& arg = handle.args[a];
      if (arg.is_input && arg.staging != nullptr)
        nchw_to_nhwc(args[a]->to_tensor().data_as<const float>(), arg.staging, arg.n, arg.c, arg.hw,
                     handle.pool.get());
    }
    ETC_TRY(run_stages(handle, context));
    for (size_t a = 0; a < args.size(); ++a) {
      const Argument& arg = handle.args[a];
      if (!arg.is_input && arg.staging != nullptr)
        nhwc_to_nchw(arg.staging, args[a]->to_tensor().data_as<float>(), arg.n, arg.c, arg.hw,
                     handle.pool.get());
    }
    return Status::Ok();
  }

  // A new size is derived from the blob (blob_resize.h) and created like
  // the first; the last few stay, so a size used recently comes back
  // without creating anything.
  Status resize(DelegateHandle* opaque, Span<EValue*> args) const override {
    if (opaque == nullptr) return fail(Error::DelegateInvalidHandle, "xnnpack: null handle");
    XnnpackDelegate& d = *static_cast<XnnpackDelegate*>(opaque);
    if (!d.resizable)
      return fail(Error::NotSupported,
                  "xnnpack: this delegate was initialised for fixed input sizes (the method has no input "
                  "with a range)");
    if (args.size() != d.active().args.size())
      return fail(Error::InvalidArgument, "xnnpack: ", std::to_string(args.size()), " arguments, expected ",
                  std::to_string(d.active().args.size()));
    std::vector<BlobDims> dims;
    for (size_t a = 0; a < args.size(); ++a) {
      const Argument& arg = d.active().args[a];
      if (!arg.is_input) continue;
      ETC_ASSIGN_OR_RETURN(BlobDims in, argument_dims(arg, args[a]));
      dims.push_back(std::move(in));
    }
    auto it = std::find_if(d.sizes.begin(), d.sizes.end(),
                           [&](const std::unique_ptr<XnnpackHandle>& h) { return has_input_dims(*h, dims); });
    if (it == d.sizes.end()) {
      ETC_ASSIGN_OR_RETURN(std::unique_ptr<XnnpackHandle> created, create_resized(d, dims));
      if (d.sizes.size() == XnnpackDelegate::kMaxSizes) d.sizes.pop_back();
      d.sizes.insert(d.sizes.begin(), std::move(created));
    } else {
      std::rotate(d.sizes.begin(), it, it + 1);  // most recent first
    }
    set_output_specs(d.active(), args);
    return Status::Ok();
  }

  std::optional<size_t> activation_bytes(const DelegateHandle* opaque) const override {
    if (opaque == nullptr) return std::nullopt;
    size_t bytes = 0;
    for (const auto& size : static_cast<const XnnpackDelegate*>(opaque)->sizes)
      bytes += size->activation_bytes;
    return bytes;
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<XnnpackDelegate*>(handle); }
};

}  // namespace

BackendInterface* xnnpack_backend() {
  static XnnpackBackend backend;
  return &backend;
}

}  // namespace etc::xnnpack
