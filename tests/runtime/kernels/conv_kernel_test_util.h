#pragma once
// Runs one portable kernel through its OpDef exactly as the runtime does
// (infer, create, scratch of scratch_bytes(), run), for the conv, linear and
// pool family tests.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/attrs.h"
#include "runtime/kernels/kernel.h"

namespace etc::test {

struct HostTensor {
  TensorSpec spec;
  std::vector<uint8_t> bytes;

  template <typename T>
  std::vector<T> values() const {
    std::vector<T> v(static_cast<size_t>(spec.shape.numel()));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

template <typename T>
HostTensor host_tensor(Shape shape, const std::vector<T>& values) {
  HostTensor t{TensorSpec{dtype_of<T>(), shape}, {}};
  REQUIRE(values.size() == static_cast<size_t>(shape.numel()));
  t.bytes.resize(values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

template <typename T>
std::vector<T> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// Infers the outputs (failing the test when infer fails), runs the kernel and
// returns the outputs. Absent optional inputs are passed as null.
inline std::vector<HostTensor> run_kernel(EdgeOp op, const ir::Attrs& attrs,
                                          const std::vector<const HostTensor*>& inputs, int num_outputs = 1) {
  const OpDef* def = find_op_def(op);
  REQUIRE(def != nullptr);
  const auto views = attrs.views();
  const AttrList list(views);
  std::vector<TensorSpec> in_specs, out_specs(static_cast<size_t>(num_outputs));
  for (const HostTensor* t : inputs) in_specs.push_back(t ? t->spec : TensorSpec{});
  const Status inferred = infer_outputs(*def, list, in_specs, out_specs);
  INFO(inferred.message());
  REQUIRE(inferred.ok());
  auto kernel = def->create(list, in_specs, out_specs);
  INFO((kernel.ok() ? std::string() : kernel.message()));
  REQUIRE(kernel.ok());

  std::vector<Tensor> in_t(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]) in_t[i] = Tensor{inputs[i]->spec, const_cast<uint8_t*>(inputs[i]->bytes.data())};
  std::vector<HostTensor> outs(static_cast<size_t>(num_outputs));
  std::vector<Tensor> out_t;
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].spec = out_specs[i];
    outs[i].bytes.assign(out_specs[i].nbytes(), 0xAB);  // garbage the kernel must overwrite
    out_t.push_back(Tensor{out_specs[i], outs[i].bytes.data()});
  }
  std::vector<const Tensor*> in_p;
  std::vector<Tensor*> out_p;
  for (auto& t : in_t) in_p.push_back(&t);
  for (auto& t : out_t) out_p.push_back(&t);
  const size_t scratch_size = (kernel.get()->scratch_bytes() + 63) / 64 * 64;
  void* scratch = scratch_size ? std::aligned_alloc(64, scratch_size) : nullptr;
  const Status s = kernel.get()->run(KernelArgs{in_p, out_p, scratch});
  std::free(scratch);
  INFO(s.message());
  REQUIRE(s.ok());
  return outs;
}

// Infer's status for the given input specs (for rejection tests).
inline Status infer_status(EdgeOp op, const ir::Attrs& attrs, const std::vector<TensorSpec>& in_specs,
                           int num_outputs = 1) {
  const OpDef* def = find_op_def(op);
  REQUIRE(def != nullptr);
  const auto views = attrs.views();
  std::vector<TensorSpec> out_specs(static_cast<size_t>(num_outputs));
  return infer_outputs(*def, AttrList(views), in_specs, out_specs);
}

template <typename T>
void require_close(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <= tol);
  }
}

}  // namespace etc::test
