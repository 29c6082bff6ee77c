#include "runtime/backends/onednn/onednn_backend.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "runtime/backends/onednn/blob_reader.h"
#include "runtime/backends/onednn/compiled_partition.h"

namespace etc::onednn {
namespace {

Result<WinogradMode> winograd_spec(Span<const CompileSpecView> specs) {
  for (const CompileSpecView& s : specs) {
    if (s.key != "winograd") continue;
    const std::string value(reinterpret_cast<const char*>(s.value.data()), s.value.size());
    if (const std::optional<WinogradMode> mode = parse_winograd_mode(value)) return *mode;
    return fail(Error::InvalidArgument, "onednn: compile spec winograd='", value,
                "' (expected auto, on or off)");
  }
  return WinogradMode::kAuto;
}

class OnednnBackend final : public BackendInterface {
 public:
  bool is_available() const override {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx2 = static_cast<unsigned>(dnnl::cpu_isa::avx2);
    return (isa & avx2) == avx2;
  }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpecView> compile_specs) const override {
    if (!is_available())
      return fail(Error::DelegateUnavailable, "onednn: this CPU lacks AVX2 (oneDNN's fast paths need it)");
    if (processed == nullptr || processed->data() == nullptr)
      return fail(Error::InvalidArgument, "onednn: no processed bytes");
    // The flatbuffer holds 8-byte scalars; a blob at a less aligned address
    // is read from an aligned copy.
    const void* blob = processed->data();
    AlignedBuffer copy;
    if (reinterpret_cast<uintptr_t>(blob) % alignof(uint64_t) != 0) {
      copy = AlignedBuffer::allocate(processed->size());
      if (!copy) return fail(Error::DelegateMemoryAllocationFailed, "onednn: cannot copy the blob");
      std::memcpy(copy.data(), blob, processed->size());
      blob = copy.data();
    }
    ETC_ASSIGN_OR_RETURN(BlobView view, read_onednn_blob(blob, processed->size()));
    CompileOptions options;
    ETC_ASSIGN_OR_RETURN(options.winograd, winograd_spec(compile_specs));
    options.log_outputs = context.options().delegate_detail == DelegateDetail::kNodeOutputs;
    const int threads = context.options().num_threads;
    options.num_threads = threads > 0 ? threads : machine_threads();
    ETC_ASSIGN_OR_RETURN(std::unique_ptr<CompiledPartition> partition, compile_partition(view, options));
    if (partition->reads_blob) {
      // Prepacked weights are read in place: the blob stays with the method.
      partition->blob_copy = std::move(copy);
    } else {
      // Weights are reordered and constants copied: the blob is not needed.
      processed->free();
    }
    return static_cast<DelegateHandle*>(partition.release());
  }

  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override {
    if (handle == nullptr) return fail(Error::DelegateInvalidHandle, "onednn: null handle");
    return run_partition(*static_cast<CompiledPartition*>(handle), context, args);
  }

  std::optional<size_t> activation_bytes(const DelegateHandle* handle) const override {
    if (handle == nullptr) return std::nullopt;
    return static_cast<const CompiledPartition*>(handle)->arena.size();
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<CompiledPartition*>(handle); }
};

}  // namespace

BackendInterface* onednn_backend() {
  static OnednnBackend backend;
  return &backend;
}

}  // namespace etc::onednn
