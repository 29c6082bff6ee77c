#include "runtime/kernels/portable/broadcast.h"

#include <algorithm>

namespace etc {

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const int r = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(r);
  for (int d = 0; d < r; ++d) {
    const int ia = d - (r - a.rank());
    const int ib = d - (r - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(Error::InvalidShape, "shapes ", a.str(), " and ", b.str(), " do not broadcast");
    out[d] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace etc
