#include <memory>
#include <mutex>

#include "compiler/backend/backend_details.h"
#include "preprocessors/register.h"
#include "preprocessors/xnnpack/xnnpack_preprocess.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

namespace etc {

void register_xnnpack_preprocessor() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend_details(xnnpack::kXnnpackBackendId, std::make_unique<xnnpack::XnnpackBackendDetails>());
  });
}

}  // namespace etc
