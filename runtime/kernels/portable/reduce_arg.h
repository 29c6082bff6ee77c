#pragma once
// arg_max / arg_min kernels (reduce_arg.cpp), looked up by reduce_op_def(),
// and what the two halves of the reduce family share.

#include "runtime/kernels/kernel.h"

namespace etc {

// The element types reductions take: every arithmetic type, not bool.
inline Status check_reduce_dtype(DType t) {
  ETC_CHECK_OR_FAIL(t != DType::Bool && t != DType::Invalid, Error::InvalidType, "does not take ",
                    dtype_name(t));
  return Status::Ok();
}

// The OpDef of arg_max or arg_min, null for any other op.
const OpDef* reduce_arg_op_def(EdgeOp op);

}  // namespace etc
