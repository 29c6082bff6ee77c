#include "runtime/core/dtype.h"

namespace etc {

size_t dtype_size(DType dtype) {
  switch (dtype) {
#define ETC_DTYPE_SIZE(E, T, N) \
  case DType::E: return sizeof(T);
    ETC_FOR_EACH_DTYPE(ETC_DTYPE_SIZE)
#undef ETC_DTYPE_SIZE
    case DType::Invalid: return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
#define ETC_DTYPE_NAME(E, T, N) \
  case DType::E: return N;
    ETC_FOR_EACH_DTYPE(ETC_DTYPE_NAME)
#undef ETC_DTYPE_NAME
    case DType::Invalid: return "invalid";
  }
  return "invalid";
}

bool dtype_valid(DType dtype) { return dtype_size(dtype) != 0; }

}  // namespace etc
