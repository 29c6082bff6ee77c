#pragma once
// Method: one execution plan of a Program, ready to run.
//   init    — validates every instruction (re-running each op's shape
//             function), creates kernels, allocates the arena and scratch.
//   execute — runs the instructions in order; no allocation, no re-checks.
// The Program must outlive the Method (constants are read from its mapping).

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/program.h"
#include "runtime/kernels/kernel.h"

namespace etc {

class Method {
 public:
  static Result<std::unique_ptr<Method>> init(const Program& program, int plan_index = 0);
  ~Method();

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const std::string& input_name(size_t i) const { return names_[inputs_[i]]; }
  const std::string& output_name(size_t i) const { return names_[outputs_[i]]; }
  const TensorSpec& input_spec(size_t i) const { return tensors_[inputs_[i]].spec; }
  const Tensor& output(size_t i) const { return tensors_[outputs_[i]]; }

  // Copies user data into input i. Fails naming the input and the expected
  // dtype/shape when `spec` differs from the planned one.
  Status set_input(size_t i, const TensorSpec& spec, const void* data);
  Status execute();

  size_t arena_bytes() const { return arena_size_; }
  size_t num_instructions() const { return steps_.size(); }

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::vector<const Tensor*> inputs;
    std::vector<Tensor*> outputs;
    uint32_t instruction = 0;
  };

  Method() = default;
  Status bind_values(const Program& program, const fb::ExecutionPlan& plan);
  Status create_kernel_step(const Program& program, const fb::KernelCall& call, uint32_t index);

  std::vector<Tensor> tensors_;
  std::vector<std::string> names_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::vector<Step> steps_;
  uint8_t* arena_ = nullptr;
  size_t arena_size_ = 0;
  uint8_t* scratch_ = nullptr;
  Tensor absent_;
};

}  // namespace etc
