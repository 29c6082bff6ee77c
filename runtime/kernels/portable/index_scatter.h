#pragma once
// Element-indexed gathers and scatters, the index-family ops with their own
// file (index_scatter.cpp): gather_elements, gather_nd, scatter_elements,
// scatter_nd. Indices are int32 or int64 and may be computed at run time;
// negative ones count from the end of their dim.

#include <memory>

#include "runtime/kernels/kernel.h"

namespace etc {

Status infer_gather_elements(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
Result<std::unique_ptr<Kernel>> create_gather_elements(const AttrList& attrs, Span<const TensorSpec> inputs,
                                                       Span<const TensorSpec> outputs);
Status infer_scatter_elements(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
Result<std::unique_ptr<Kernel>> create_scatter_elements(const AttrList& attrs, Span<const TensorSpec> inputs,
                                                        Span<const TensorSpec> outputs);
Status infer_gather_nd(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
Result<std::unique_ptr<Kernel>> create_gather_nd(const AttrList& attrs, Span<const TensorSpec> inputs,
                                                 Span<const TensorSpec> outputs);
Status infer_scatter_nd(const AttrList& attrs, Span<const TensorSpec> inputs, Span<TensorSpec> outputs);
Result<std::unique_ptr<Kernel>> create_scatter_nd(const AttrList& attrs, Span<const TensorSpec> inputs,
                                                  Span<const TensorSpec> outputs);

}  // namespace etc
