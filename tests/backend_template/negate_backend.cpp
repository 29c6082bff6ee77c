#include "tests/backend_template/negate_backend.h"

#include <cstring>
#include <new>

#include "runtime/backend/context.h"
#include "tests/backend_template/negate_format.h"

namespace etc::negate {
namespace {

struct Handle {
  uint64_t negations = 0, elements = 0;
};

uint64_t word(const uint8_t* p) {
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

class NegateBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed,
                               Span<const CompileSpecView>) const override {
    // The blob is untrusted: check its size before reading it.
    if (processed == nullptr || processed->size() != kNegateBlobBytes)
      return fail(Error::InvalidProgram, "negate: the blob is not ", std::to_string(kNegateBlobBytes),
                  " bytes");
    const auto* bytes = static_cast<const uint8_t*>(processed->data());
    auto* handle = new (std::nothrow) Handle{word(bytes), word(bytes + 8)};
    if (handle == nullptr) return fail(Error::DelegateMemoryAllocationFailed, "negate: out of memory");
    processed->free();  // everything needed is in the handle
    return static_cast<DelegateHandle*>(handle);
  }

  Status execute(BackendExecutionContext& context, DelegateHandle* opaque,
                 Span<EValue*> args) const override {
    const auto& h = *static_cast<const Handle*>(opaque);
    if (args.size() != 2 || !args[0]->is_tensor() || !args[1]->is_tensor() ||
        args[0]->to_tensor().numel() != static_cast<int64_t>(h.elements) ||
        args[1]->to_tensor().numel() != static_cast<int64_t>(h.elements))
      return fail(Error::InvalidArgument, "negate: expected one input and one output of ",
                  std::to_string(h.elements), " float32 elements");
    const float* in = args[0]->to_tensor().data_as<const float>();
    float* out = args[1]->to_tensor().data_as<float>();
    // One profiling event per node of the chain, by its integer identifier.
    for (uint64_t i = 0; i < h.negations; ++i) {
      const EventTracerEntry event =
          event_tracer_start_profiling_delegate(context.event_tracer(), {}, static_cast<int64_t>(i));
      for (uint64_t e = 0; e < h.elements; ++e) out[e] = -(i == 0 ? in[e] : out[e]);
      event_tracer_end_profiling_delegate(context.event_tracer(), event);
    }
    if (h.negations == 0) std::memcpy(out, in, h.elements * sizeof(float));
    return Status::Ok();
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<Handle*>(handle); }
};

}  // namespace

BackendInterface* negate_backend() {
  static NegateBackend backend;
  return &backend;
}

}  // namespace etc::negate
