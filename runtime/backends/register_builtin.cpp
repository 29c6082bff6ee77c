#include "runtime/backends/register_builtin.h"

#include "runtime/backend/interface.h"
#include "runtime/backends/demo/demo_backend.h"
#include "runtime/backends/demo/demo_format.h"
#ifdef ETC_HAVE_ONEDNN_BACKEND
#include "runtime/backend/loaded_backend.h"
#include "runtime/backends/onednn/onednn_blob.h"
#endif
#ifdef ETC_HAVE_XNNPACK_BACKEND
#include "runtime/backends/xnnpack/xnnpack_backend.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"
#endif

namespace etc {
namespace {

Status register_once(const Backend& backend) {
  if (get_backend_class(backend.name) == backend.interface) return Status::Ok();
  return register_backend(backend);
}

}  // namespace

Status register_builtin_backends() {
  // One line per built-in backend.
  ETC_TRY(register_once(Backend{demo::kDemoBackendId, demo::demo_backend()}));
#ifdef ETC_HAVE_XNNPACK_BACKEND  // the build option ETC_BACKEND_XNNPACK
  ETC_TRY(register_once(Backend{xnnpack::kXnnpackBackendId, xnnpack::xnnpack_backend()}));
#endif
#ifdef ETC_HAVE_ONEDNN_BACKEND  // the build option ETC_BACKEND_ONEDNN
  // Loaded from libetc_onednn.so when a program first needs it.
  static const std::unique_ptr<BackendInterface> onednn_module =
      loaded_backend("libetc_onednn.so", "etc_onednn_backend", ETC_BACKEND_BUILD_DIR);
  ETC_TRY(register_once(Backend{onednn::kOnednnBackendId, onednn_module.get()}));
#endif
  return Status::Ok();
}

}  // namespace etc
