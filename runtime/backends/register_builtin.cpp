#include "runtime/backends/register_builtin.h"

#include "runtime/backend/interface.h"
#include "runtime/backends/demo/demo_backend.h"
#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/xnnpack/xnnpack_backend.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

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
  ETC_TRY(register_once(Backend{xnnpack::kXnnpackBackendId, xnnpack::xnnpack_backend()}));
  return Status::Ok();
}

}  // namespace etc
