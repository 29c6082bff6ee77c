#pragma once
// Runs one portable kernel on owned test tensors (resize and rnn kernel tests).

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "compiler/ir/attrs.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/kernels/kernel.h"

namespace etc::test {

struct OwnedTensor {
  TensorSpec spec;  // dtype Invalid: an absent optional input
  std::vector<uint8_t> bytes;

  template <typename T>
  static OwnedTensor of(Shape shape, const std::vector<T>& values) {
    OwnedTensor t{TensorSpec{dtype_of<T>(), shape}, {}};
    REQUIRE(static_cast<int64_t>(values.size()) == shape.numel());
    t.bytes.resize(values.size() * sizeof(T));
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

// n values in [-1, 1] from a linear congruential generator: the same on
// every platform, unlike <random>'s distributions.
inline std::vector<float> pseudo_random(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return v;
}

// Runs op's portable kernel on inputs; with constant_inputs, first tells the
// kernel (Kernel::prepare) that every input is a program constant, as the
// runtime does for initializers. Inputs lie 64-byte aligned, as a program's
// constants do, or `misalign` bytes past that. `pool`: KernelArgs::pool.
inline std::vector<OwnedTensor> run_kernel(EdgeOp op, const ir::Attrs& attrs, std::vector<OwnedTensor> inputs,
                                           int num_outputs, bool constant_inputs = false, size_t misalign = 0,
                                           TaskPool* pool = nullptr) {
  const OpDef* def = find_op_def(op);
  REQUIRE(def != nullptr);
  const std::vector<AttrView> views = attrs.views();
  const AttrList list(views);
  std::vector<TensorSpec> in_specs;
  for (const auto& t : inputs) in_specs.push_back(t.spec);
  std::vector<TensorSpec> out_specs(static_cast<size_t>(num_outputs));
  Status s = infer_outputs(*def, list, in_specs, out_specs);
  INFO(s.message());
  REQUIRE(s.ok());
  auto kernel = def->create(list, in_specs, out_specs);
  REQUIRE(kernel.ok());
  std::vector<OwnedTensor> outputs;
  for (const auto& spec : out_specs)
    outputs.push_back(OwnedTensor{spec, std::vector<uint8_t>(spec.nbytes(), 0xAB)});
  std::vector<Tensor> in_t, out_t;
  std::vector<AlignedBuffer> storage;
  for (auto& t : inputs) {
    storage.push_back(AlignedBuffer::allocate(t.bytes.size() + misalign));
    REQUIRE(storage.back());
    uint8_t* at = storage.back().as<uint8_t>() + misalign;
    if (!t.bytes.empty()) std::memcpy(at, t.bytes.data(), t.bytes.size());
    in_t.push_back(Tensor{t.spec, at});
  }
  for (auto& t : outputs) out_t.push_back(Tensor{t.spec, t.bytes.data()});
  std::vector<const Tensor*> in_p;
  std::vector<Tensor*> out_p;
  for (auto& t : in_t) in_p.push_back(&t);
  for (auto& t : out_t) out_p.push_back(&t);
  if (constant_inputs) {
    std::vector<const Tensor*> constants;
    for (const Tensor* t : in_p) constants.push_back(t->present() ? t : nullptr);
    Status p = kernel.get()->prepare(constants);
    INFO(p.message());
    REQUIRE(p.ok());
  }
  std::vector<double> scratch((kernel.get()->scratch_bytes() + 63) / 8 + 8);  // over-allocated to align
  void* aligned =
      reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  KernelArgs args{{in_p.data(), in_p.size()}, {out_p.data(), out_p.size()}, aligned, pool};
  Status r = kernel.get()->run(args);
  INFO(r.message());
  REQUIRE(r.ok());
  return outputs;
}

}  // namespace etc::test
