#pragma once
// Method: one execution plan of a Program, ready to run.
//   init    — validates every instruction (re-running each op's shape
//             function), creates kernels, allocates the arena and scratch,
//             and initialises every delegate call with its registered
//             backend (backend->init with the processed bytes and compile
//             specs from the program).
//   execute — runs the main chain's instructions in order; no allocation, no
//             re-checks. An If runs one of its branch chains and copies its
//             outputs out; a Loop runs its body chain per iteration, moving
//             carried values and filling scan outputs (method_control.cpp).
//             A delegate call gets its inputs then its outputs as args, and
//             a temp allocator that is reset after every call. With a
//             tracer, each run is one begin_run/end_run, each instruction
//             one profiling event (the delegate's own events nest inside),
//             and, when the tracer asks, each instruction's outputs are
//             logged. Errors name the instruction and the ONNX node(s) it
//             came from (for a delegate, the node the backend says failed).
//   ~Method — destroys every initialised delegate handle once, last first.
// The Program must outlive the Method (constants and processed bytes are read
// from its mapping), and so must the tracer and every backend it uses.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend/interface.h"
#include "runtime/backend/options.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/task_pool.h"
#include "runtime/core/tensor.h"
#include "runtime/delegate/delegate.h"
#include "runtime/devtools/event_tracer.h"
#include "runtime/executor/program.h"
#include "runtime/kernels/attrs.h"
#include "runtime/kernels/kernel.h"

namespace etc {

class Method {
 public:
  // Errors of delegate calls name the program, instruction and backend:
  // DelegateNotRegistered / DelegateUnavailable when a delegate's backend is
  // not registered / not available on this machine (checked for every
  // delegate before any is initialised); otherwise the backend's own error.
  // `options` is copied; `tracer` may be null (no tracing).
  static Result<std::unique_ptr<Method>> init(const Program& program, int plan_index = 0,
                                              const RuntimeOptions& options = {},
                                              EventTracer* tracer = nullptr);
  ~Method();
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const std::string& input_name(size_t i) const { return names_[inputs_[i]]; }
  const std::string& output_name(size_t i) const { return names_[outputs_[i]]; }
  const TensorSpec& input_spec(size_t i) const { return tensors_[inputs_[i]].spec; }
  const Tensor& output(size_t i) const { return tensors_[outputs_[i]]; }

  // Copies user data into input i. Fails naming the input and the expected
  // dtype/shape when `spec` differs from the current one.
  Status set_input(size_t i, const TensorSpec& spec, const void* data);
  // Input i's memory, input_spec(i).nbytes() bytes, to write its data into
  // in place of set_input (null when i is out of range).
  void* mutable_input_data(size_t i) { return i < inputs_.size() ? tensors_[inputs_[i]].data : nullptr; }

  // Bounded dynamic shapes (method_resize.cpp). An input compiled with a
  // range of sizes (`etc preprocess --input-shape x=1x3x320..960x320..960`)
  // runs at any shape within it: resize_input checks the bounds (naming the
  // input and dimension), re-runs every instruction's shape function in
  // execution order, checks each value still fits the memory planned for
  // the upper bound, and re-creates the kernels; a delegate must resize
  // itself (BackendInterface::resize). Resizing allocates (kernels,
  // scratch); execute still does not. On failure the previous shapes stay.
  Status resize_input(size_t i, const Shape& shape);
  // The smallest and largest shape input i accepts (both the compiled shape
  // for a fixed input).
  const Shape& input_min_shape(size_t i) const { return input_min_[i]; }
  const Shape& input_max_shape(size_t i) const { return input_max_[i]; }
  Status execute();

  // Bytes of the activation arena: the planned size (trimmed to the end of
  // the last value when the plan reserves more).
  size_t arena_bytes() const { return arena_size_; }
  size_t num_instructions() const { return steps_.size(); }
  // Chains of instructions: 1 without control flow.
  size_t num_chains() const { return chains_.size(); }
  size_t num_delegate_calls() const { return delegates_.size(); }
  // The activations each initialised delegate call holds in memory of its
  // own, beside the arena (BackendInterface::activation_bytes; nullopt
  // where its backend does not say), in call order, then each range a
  // load-time delegate replaced (DelegateKernel::activation_bytes); calls
  // running their portable fallback are not listed.
  struct DelegateActivations {
    std::string_view backend;
    std::optional<size_t> bytes;
  };
  std::vector<DelegateActivations> delegate_activations() const;
  // The ranges of the kernel list a load-time delegate replaced
  // (RuntimeOptions::delegate), and why it replaced none when its init
  // said NotSupported (empty otherwise).
  const std::vector<ReplacedRange>& delegated_ranges() const { return replaced_; }
  const std::string& delegate_not_used() const { return delegate_not_used_; }
  // Delegate calls running their portable fallback (the backend could not).
  size_t num_fallbacks_used() const;
  // The plan's name ("forward" when the program leaves it out).
  const std::string& name() const { return name_; }

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;  // null for a delegate call
    std::vector<const Tensor*> inputs;
    std::vector<Tensor*> outputs;
    int delegate_call = -1;  // index in delegates_ for a delegate call
    int control = -1;        // index in controls_ for an If or a Loop
    uint32_t instruction = 0;
    // Kernel calls: what re-creating the kernel for new shapes needs.
    const OpDef* def = nullptr;
    std::vector<AttrView> attrs;           // views into the program mapping
    std::vector<const Tensor*> constants;  // per input: the program constant, or null
    std::vector<TensorSpec> in_specs;      // the input shapes the kernel was created for
    // Load-time delegation: the first step of a replaced range runs
    // replaced_[replacement] and the `skip` steps after it are not run;
    // every step of the range is `replaced` (its kernel freed).
    int replacement = -1;
    uint32_t skip = 0;
    bool replaced = false;
    // A delegate call whose backend cannot run here: this chain of portable
    // instructions runs instead, its outputs copied into `outputs`.
    int fallback = -1;
  };
  // A run of steps_; its inputs are set and its outputs read by the
  // control-flow step that runs it.
  struct Chain {
    uint32_t first = 0, count = 0;
    std::vector<Tensor*> inputs;
    std::vector<const Tensor*> outputs;
  };
  // An IfCall or LoopCall, resolved to tensors.
  struct Control {
    bool is_loop = false;
    const Tensor* cond = nullptr;        // null: true
    const Tensor* trip_count = nullptr;  // loops; null: no limit
    uint32_t chains[2] = {0, 0};         // If: then, else; Loop: body
    std::string_view errors[2];          // If: why a branch cannot run (empty: it can)
    std::vector<const Tensor*> carried;  // loops: initial values
    std::vector<Tensor*> outputs;
    uint32_t instruction = 0;
  };
  template <bool kTraced>
  Status run_chain(uint32_t chain);
  template <bool kTraced>
  Status run_step(Step& step);
  template <bool kTraced>
  Status run_step_traced_if(Step& step);
  // method_control.cpp
  Status bind_chains(const fb::ExecutionPlan& plan);
  Status create_control_step(const fb::Instruction& ins, uint32_t index);
  template <bool kTraced>
  Status run_control(const Control& control);
  Status check_control(const Control& control, uint32_t index) const;
  // "instruction 4 (conv) from ONNX node 'conv_1' (Conv)"
  std::string describe_instruction(uint32_t instruction) const;
  // One initialised delegate call. Its address is stable for the Method's
  // life (delegates_ is reserved before the first init), because the backend
  // may keep the pointer to `processed` it was given.
  struct DelegateCall {
    const BackendInterface* backend = nullptr;
    DelegateHandle* handle = nullptr;
    std::string_view backend_id;  // in the program mapping
    uint32_t delegate = 0;
    uint32_t instruction = 0;
    FreeableBuffer processed;
    std::vector<EValue> values;           // one per arg, viewing tensors_
    std::vector<EValue*> args;            // inputs, then outputs
    std::vector<TensorSpec> input_specs;  // the shapes it was initialised (or last resized) for
  };

  Method() = default;
  Status bind_values(const Program& program, const fb::ExecutionPlan& plan);
  Status create_kernel_step(const Program& program, const fb::KernelCall& call, uint32_t index);
  Status create_steps(const Program& program, const fb::ExecutionPlan& plan);
  // method_delegate.cpp
  Status prepare_delegates(const Program& program, const fb::ExecutionPlan& plan);
  Status create_delegate_step(const Program& program, const fb::DelegateCall& call, uint32_t index);
  Status execute_delegate(DelegateCall& call);
  // A delegate call's portable fallback in its place (`why` the backend cannot run).
  Status create_fallback_step(const fb::DelegateCall& call, uint32_t index, const std::string& why);
  Status check_fallback_chains() const;
  template <bool kTraced>
  Status run_fallback(const Step& step);
  std::string describe_failed_node(const DelegateCall& call, const BackendExecutionContext& context) const;
  void destroy_delegates();
  // method_runtime_delegate.cpp
  Status apply_runtime_delegate();
  DelegateModel describe_kernels() const;
  Status run_replacement(const Step& step);

  std::vector<Tensor> tensors_;
  std::vector<std::string> names_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::vector<Step> steps_;
  std::vector<Chain> chains_;
  std::vector<Control> controls_;
  // method_resize.cpp
  Status bind_input_bounds(const fb::ExecutionPlan& plan);
  Status reinfer();
  Status reinfer_chain(uint32_t chain);
  Status reinfer_step(Step& step);
  Status set_spec(Tensor& t, const TensorSpec& spec, uint32_t instruction);
  std::vector<Shape> input_min_, input_max_;
  std::vector<size_t> capacity_;       // by value: bytes the plan holds for it
  std::vector<uint32_t> chain_of_;     // by instruction
  std::vector<uint32_t> chain_depth_;  // by chain: control-flow levels above it
  AlignedBuffer arena_;
  size_t arena_size_ = 0;
  AlignedBuffer scratch_;
  Tensor absent_;
  // The threads of kernels that ask for them (Kernel::wants_threads):
  // options_.num_threads of them, the pool its delegates share; empty
  // otherwise. Acquired once, by acquire_kernel_pool().
  SharedTaskPool kernel_pool_;
  void acquire_kernel_pool();

  const Program* program_ = nullptr;
  const fb::ExecutionPlan* plan_ = nullptr;
  RuntimeOptions options_;
  EventTracer* tracer_ = nullptr;
  std::string name_;
  std::vector<DelegateCall> delegates_;
  std::vector<ReplacedRange> replaced_;
  // Fallbacks: by instruction, why its delegate's backend cannot run (set by
  // prepare_delegates for calls that have a fallback); by chain, the
  // instruction whose fallback it is (-1) and whether it stays unused (its
  // kernels are then never created).
  std::map<uint32_t, std::string> unusable_;
  std::vector<int64_t> fallback_of_chain_;
  std::vector<bool> chain_idle_;
  std::string delegate_not_used_;
  uint32_t program_delegates_ = 0;  // the program's delegates, before the load-time ones
  AlignedBuffer temp_;
  MemoryAllocator temp_allocator_;
};

}  // namespace etc
