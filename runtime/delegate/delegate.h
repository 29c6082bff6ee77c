#pragma once
// Load-time delegates (MindSpore Lite's Delegate): a program compiled with
// or without ahead-of-time delegates can hand ranges of its portable kernels
// to a delegate when it is loaded.
//
//   RuntimeOptions options;
//   options.delegate = &my_delegate;            // MindSpore's SetDelegate; null: plain execution
//   auto method = Method::init(program, 0, options);
//
// Method::init, after creating its kernels:
//   1. delegate->init()    checks the device and acquires resources.
//                          NotSupported: the portable kernels run, with a
//                          warning naming the delegate and why; any other
//                          error fails Method::init.
//   2. delegate->build(m)  walks the kernel list (m.kernel(k): op,
//                          attributes, tensors) and replaces ranges of it
//                          (m.replace(from, end, kernel)) by kernels of its
//                          own. Replacing nothing is fine.
//   3. each replacing kernel's prepare(), once; then every execute runs the
//      replaced ranges through their kernels and the rest as before.
//   When an input compiled with a range of sizes changes shape
//   (Method::resize_input), the method re-runs the shape functions (the
//   outputs of a replaced range get their new specs) and calls resize() on
//   each replacing kernel after its range.
//
// A minimal third-party delegate: every Relu runs on the delegate's own
// kernel.
//
//   class ReluKernel : public DelegateKernel {
//    public:
//     using DelegateKernel::DelegateKernel;
//     Status prepare() override { return Status::Ok(); }
//     Status execute() override {
//       const Tensor& x = *inputs()[0];
//       Tensor& y = *outputs()[0];
//       for (int64_t i = 0; i < x.numel(); ++i)
//         y.data_as<float>()[i] = std::max(x.data_as<const float>()[i], 0.0f);
//       return Status::Ok();
//     }
//     Status resize() override { return Status::Ok(); }  // the loop reads the new numel
//   };
//
//   class ReluDelegate : public Delegate {
//    public:
//     std::string_view name() const override { return "relu"; }
//     Status init() override { return Status::Ok(); }
//     Status build(DelegateModel& model) override {
//       for (size_t k = 0; k < model.num_kernels(); ++k) {
//         const KernelView& kernel = model.kernel(k);
//         if (kernel.kind != KernelKind::kPortable || kernel.op != EdgeOp::Relu) continue;
//         ETC_ASSIGN_OR_RETURN(KernelRange range, model.range(k, k + 1));
//         ETC_TRY(model.replace(k, k + 1, std::make_unique<ReluKernel>(range.inputs, range.outputs)));
//       }
//       return Status::Ok();
//     }
//   };
//
// The kernel list is the method's main chain in execution order (a
// topological order). Instructions inside control-flow bodies are not in it.
// The delegate must outlive every Method initialised with it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/backend/options.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/devtools/event_tracer.h"
#include "runtime/kernels/attrs.h"
#include "runtime/kernels/edge_ops.h"

namespace etc {

enum class KernelKind {
  kPortable,      // a portable kernel: can be replaced
  kDelegateCall,  // an ahead-of-time delegate's call
  kControlFlow,   // an If or a Loop
};

// One entry of the kernel list: the kernel and its primitive (MindSpore's
// GetPrimitive: the op and its attributes).
struct KernelView {
  KernelKind kind = KernelKind::kPortable;
  EdgeOp op{};                        // kPortable only
  AttrList attrs;                     // kPortable only; views into the program
  std::vector<const Tensor*> inputs;  // an absent optional input is a tensor with !present()
  std::vector<Tensor*> outputs;
  // Per input: true when it is a constant of the program (its data is fixed).
  std::vector<bool> constant;
  uint32_t instruction = 0;           // in the program's execution plan
  Span<const int32_t> debug_handles;  // the ONNX nodes it came from (the program's debug handles)
};

// What a kernel replacing kernels [from, end) takes and gives: the values
// the range reads from outside it (constants included), and those it
// produces that anything after it reads or that the method returns.
struct KernelRange {
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;
};

// A kernel that replaces a range of the kernel list (MindSpore's graph
// kernel). It reads and writes the method's tensors it was given.
class DelegateKernel {
 public:
  DelegateKernel(std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  virtual ~DelegateKernel() = default;
  DelegateKernel(const DelegateKernel&) = delete;
  DelegateKernel& operator=(const DelegateKernel&) = delete;

  // Once, after build, at the method's current shapes. May allocate.
  virtual Status prepare() = 0;
  // Every run. Must not allocate.
  virtual Status execute() = 0;
  // The inputs changed shape (Method::resize_input); the outputs' specs are
  // already the new ones. May allocate. The default refuses.
  virtual Status resize() { return fail(Error::NotSupported, "this kernel cannot resize"); }
  // Bytes of activations it holds of its own, beside the method's arena
  // (BackendInterface::activation_bytes); nullopt when it does not say.
  virtual std::optional<size_t> activation_bytes() const { return std::nullopt; }

  const std::vector<const Tensor*>& inputs() const { return inputs_; }
  const std::vector<Tensor*>& outputs() const { return outputs_; }

  // Developer tools. A kernel that reports profiling events inside its
  // execute (event_tracer_*_delegate, as a backend does) keys them by the
  // identifiers of its debug handle map, whose handles are the program's
  // (KernelView::debug_handles): the inspector then names the ONNX nodes.
  struct DebugMapEntry {
    int64_t id = -1;   // an integer identifier, or
    std::string name;  // a string one
    std::vector<int32_t> handles;
  };
  virtual std::vector<DebugMapEntry> debug_handle_map() const { return {}; }
  // The method's tracer (null: not tracing), set before prepare.
  EventTracer* event_tracer() const { return tracer_; }
  void set_event_tracer(EventTracer* tracer) { tracer_ = tracer; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  EventTracer* tracer_ = nullptr;
};

// A range of the kernel list a delegate replaced.
struct ReplacedRange {
  size_t from = 0, end = 0;  // kernels [from, end)
  uint32_t first_instruction = 0, last_instruction = 0;
  std::unique_ptr<DelegateKernel> kernel;
};

// The method as a delegate sees it while it builds.
class DelegateModel {
 public:
  size_t num_kernels() const { return kernels_.size(); }
  const KernelView& kernel(size_t k) const { return kernels_[k]; }
  // The method's inputs and outputs.
  const std::vector<const Tensor*>& inputs() const { return inputs_; }
  const std::vector<const Tensor*>& outputs() const { return outputs_; }

  // The options the method was initialised with (threads, detail).
  const RuntimeOptions& options() const { return *options_; }
  // Whether an input of the method has a range of sizes, so replacing
  // kernels will be resized (DelegateKernel::resize).
  bool may_resize() const { return may_resize_; }

  // What a kernel replacing [from, end) takes and gives. Errors as replace's
  // for the range itself.
  Result<KernelRange> range(size_t from, size_t end) const;
  // Replaces kernels [from, end) by `kernel`. Refused (InvalidArgument,
  // naming the kernels) when the range is empty or past the list, overlaps
  // a range already replaced (the two would not run contiguously), holds a
  // kernel that is not portable, or would break a data dependency: the
  // kernel does not read every value the range reads from outside (a
  // program constant it holds a copy of excepted), or does not produce
  // every value the range produces that is read after it.
  Status replace(size_t from, size_t end, std::unique_ptr<DelegateKernel> kernel);

  // Built by the method (method_runtime_delegate.cpp).
  std::vector<KernelView> kernels_;
  std::vector<const Tensor*> inputs_, outputs_;
  const RuntimeOptions* options_ = nullptr;
  bool may_resize_ = false;
  // Per tensor: the last kernel that reads it; kReadToTheEnd when the method
  // returns it or a control-flow body or chain caller reads it.
  static constexpr size_t kReadToTheEnd = SIZE_MAX;
  std::unordered_map<const Tensor*, size_t> last_use_;
  std::vector<ReplacedRange> replaced_;  // in the order replaced
};

// A load-time delegate (MindSpore Lite's Delegate).
class Delegate {
 public:
  virtual ~Delegate() = default;
  virtual std::string_view name() const = 0;
  // Checks the device and acquires resources; NotSupported means the
  // portable kernels run.
  virtual Status init() = 0;
  virtual Status build(DelegateModel& model) = 0;
};

}  // namespace etc
