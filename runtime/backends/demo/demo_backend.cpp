#include "runtime/backends/demo/demo_backend.h"

#include <string>

#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/demo/demo_program.h"

namespace etc::demo {
namespace {

// Applies the compile specs the demo backend knows; others are ignored so a
// program from a newer compiler with extra hints still runs.
Status apply_compile_specs(const DemoProgram& program, Span<const CompileSpecView> compile_specs) {
  for (const CompileSpecView& spec : compile_specs) {
    if (spec.key != kMaxInputElementsKey) continue;
    const std::string text(spec.value.begin(), spec.value.end());
    size_t limit = 0;
    bool valid = !text.empty() && text.size() <= 18;
    for (char ch : text) {
      valid = valid && ch >= '0' && ch <= '9';
      if (valid) limit = limit * 10 + static_cast<size_t>(ch - '0');
    }
    if (!valid)
      return fail(Error::InvalidArgument, "demo: compile spec ", kMaxInputElementsKey, ": '", text,
                  "' is not a decimal element count");
    for (size_t i = 0; i < program.input_numel.size(); ++i)
      if (static_cast<size_t>(program.input_numel[i]) > limit)
        return fail(Error::InvalidArgument, "demo: input in", std::to_string(i), " has ",
                    std::to_string(program.input_numel[i]), " elements, more than ", kMaxInputElementsKey,
                    " = ", std::to_string(limit));
  }
  return Status::Ok();
}

class DemoBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& /*context*/, FreeableBuffer* processed,
                               Span<const CompileSpecView> compile_specs) const override {
    if (processed == nullptr || (processed->data() == nullptr && processed->size() > 0))
      return fail(Error::InvalidArgument, "demo: no processed bytes");
    const std::string_view text(static_cast<const char*>(processed->data()), processed->size());
    ETC_ASSIGN_OR_RETURN(std::unique_ptr<DemoProgram> program, parse_demo_program(text));
    ETC_TRY(apply_compile_specs(*program, compile_specs));
    // Everything the program needs was copied out of the text.
    processed->free();
    return static_cast<DelegateHandle*>(program.release());
  }

  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override {
    if (handle == nullptr) return fail(Error::DelegateInvalidHandle, "demo: null handle");
    DemoProgram& program = *static_cast<DemoProgram*>(handle);
    ETC_TRY(check_demo_args(program, args));
    run_demo_program(program, args, context.event_tracer());
    return Status::Ok();
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<DemoProgram*>(handle); }
};

}  // namespace

BackendInterface* demo_backend() {
  static DemoBackend backend;
  return &backend;
}

}  // namespace etc::demo
