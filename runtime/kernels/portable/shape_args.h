#pragma once
// Run-time shape arguments of the 'shape' family. When a model computes a
// shape-like argument (reshape's shape, slice's starts, pad's pads, ...) at run
// time, the compiler types the op from the output type the model declares and
// passes the ONNX argument as an extra optional input. These helpers check
// such an input's spec at init and read it at run time without allocating;
// only the failure paths build messages.

#include <array>
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel.h"

namespace etc::shape_ops {

// Most entries a run-time argument may hold: pads has two per dim.
inline constexpr int kMaxArgLen = 2 * kMaxRank;

// True when optional input i is given.
inline bool has_arg(Span<const TensorSpec> in, size_t i) {
  return in.size() > i && in[i].dtype != DType::Invalid;
}
inline bool has_arg(const KernelArgs& args, size_t i) {
  return args.inputs.size() > i && args.inputs[i]->present();
}

// Fails unless `spec` is int32 or int64 and 1-D (or, with `scalar`, holds one
// element of rank 0 or 1). `what` names the argument.
Status check_int_arg(const TensorSpec& spec, const char* what, bool scalar = false);

// The output spec of an op whose run-time arguments decide its shape, which
// the compiler resolved into the "shape" attribute: the input's dtype, that
// shape (of the input's rank).
Status output_from_shape_attr(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out);

// Element i of an int32/int64 tensor as int64.
inline int64_t int_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::Int32 ? t.data_as<const int32_t>()[i] : t.data_as<const int64_t>()[i];
}

// The values of a run-time argument, copied to a fixed array.
struct IntArg {
  std::array<int64_t, kMaxArgLen> v{};
  int n = 0;
  int64_t operator[](int i) const { return v[static_cast<size_t>(i)]; }
};

// Reads `t`; fails naming `op` and `what` when it holds more than kMaxArgLen values.
Status read_int_arg(const Tensor& t, const char* op, const char* what, IntArg* out);

// "[1, -1, 3]": the values of an int argument, for messages.
std::string arg_str(const Tensor& t);

// The InvalidArgument failure of an argument that disagrees with the static
// output shape: "<op>: run-time <what> <values> <reason>; the declared output
// shape is <declared>".
Failure arg_mismatch(const char* op, const char* what, const Tensor& arg, const std::string& reason,
                     const Shape& declared);

}  // namespace etc::shape_ops
