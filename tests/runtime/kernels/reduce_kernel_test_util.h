#pragma once
// Runs one portable kernel through its OpDef exactly as the runtime does
// (infer, create, run with 64-byte aligned scratch) on host vectors. Shared by
// the reduce, index, softmax and norm kernel tests.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/attrs.h"
#include "runtime/kernels/kernel.h"

namespace etc::testing {

struct HostTensor {
  TensorSpec spec;
  std::vector<uint8_t> bytes;

  template <typename T>
  std::vector<T> values() const {
    std::vector<T> v(static_cast<size_t>(spec.shape.numel()));
    if (!bytes.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

template <typename T>
HostTensor host(Shape shape, const std::vector<T>& values) {
  HostTensor t{TensorSpec{dtype_of<T>(), shape}, {}};
  REQUIRE(static_cast<int64_t>(values.size()) == shape.numel());
  t.bytes.resize(values.size() * sizeof(T));
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// An absent optional input.
inline HostTensor absent() { return HostTensor{}; }

// Infers, creates and runs the kernel; returns run()'s status, with the
// outputs in `outs`. Infer and create must succeed.
inline Status try_run_kernel(EdgeOp op, const ir::Attrs& attrs, const std::vector<HostTensor>& inputs,
                             int num_outputs, std::vector<HostTensor>& outs) {
  const OpDef* def = find_op_def(op);
  REQUIRE(def != nullptr);
  const auto views = attrs.views();
  const AttrList list(views);
  std::vector<TensorSpec> in_specs, out_specs(static_cast<size_t>(num_outputs));
  for (const HostTensor& t : inputs) in_specs.push_back(t.spec);
  const Status inferred = infer_outputs(*def, list, in_specs, out_specs);
  INFO(inferred.message());
  REQUIRE(inferred.ok());
  auto kernel = def->create(list, in_specs, out_specs);
  INFO((kernel.ok() ? std::string() : kernel.message()));
  REQUIRE(kernel.ok());
  std::vector<Tensor> in_t, out_t;
  for (const HostTensor& t : inputs) in_t.push_back(Tensor{t.spec, const_cast<uint8_t*>(t.bytes.data())});
  outs.assign(static_cast<size_t>(num_outputs), HostTensor{});
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].spec = out_specs[i];
    outs[i].bytes.assign(out_specs[i].nbytes(), 0xAB);  // garbage the kernel must overwrite
    out_t.push_back(Tensor{out_specs[i], outs[i].bytes.data()});
  }
  std::vector<const Tensor*> in_p;
  std::vector<Tensor*> out_p;
  for (auto& t : in_t) in_p.push_back(&t);
  for (auto& t : out_t) out_p.push_back(&t);
  const size_t scratch_bytes = (kernel.get()->scratch_bytes() + 63) / 64 * 64;
  std::unique_ptr<void, decltype(&std::free)> scratch(
      scratch_bytes ? std::aligned_alloc(64, scratch_bytes) : nullptr, &std::free);
  return kernel.get()->run(KernelArgs{in_p, out_p, scratch.get()});
}

inline std::vector<HostTensor> run_kernel(EdgeOp op, const ir::Attrs& attrs,
                                          const std::vector<HostTensor>& inputs, int num_outputs) {
  std::vector<HostTensor> outs;
  const Status s = try_run_kernel(op, attrs, inputs, num_outputs, outs);
  INFO(s.message());
  REQUIRE(s.ok());
  return outs;
}

// Infer only: the failure message, or "" when the specs are accepted.
inline std::string infer_error(EdgeOp op, const ir::Attrs& attrs, const std::vector<TensorSpec>& inputs,
                               int num_outputs) {
  const auto views = attrs.views();
  std::vector<TensorSpec> outs(static_cast<size_t>(num_outputs));
  const Status s = infer_outputs(*find_op_def(op), AttrList(views), inputs, outs);
  return s.ok() ? "" : s.message();
}

}  // namespace etc::testing
