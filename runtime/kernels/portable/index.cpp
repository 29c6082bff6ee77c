// Portable kernels of the 'index' family (see runtime/kernels/edge_ops.def).
#include "runtime/kernels/kernel.h"

namespace etc {

// No kernels of this family are built yet: the compiler rejects these ops
// with "no portable kernel".
const OpDef* index_op_def(EdgeOp) { return nullptr; }

}  // namespace etc
