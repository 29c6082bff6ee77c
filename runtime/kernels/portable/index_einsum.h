#pragma once
// einsum, the index-family op with its own file (index_einsum.cpp). The
// equation is the normalized explicit form the importer writes: letters only,
// one term per operand, "->" and the output term always present.

#include <memory>

#include "runtime/kernels/kernel.h"

namespace etc {

inline constexpr int kMaxEinsumOperands = 8;

Status infer_einsum(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
Result<std::unique_ptr<Kernel>> create_einsum(const AttrList& attrs, Span<const TensorSpec> inputs,
                                              Span<const TensorSpec> outputs);

}  // namespace etc
