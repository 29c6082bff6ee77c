#include "preprocessors/register.h"

#include <mutex>

#include "preprocessors/demo/demo_preprocess.h"
#include "preprocessors/onednn/onednn_preprocess.h"
#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/onednn/onednn_blob.h"

namespace etc {

void register_builtin_preprocessors() {
  static std::once_flag once;
  register_xnnpack_preprocessor();
  std::call_once(once, [] {
    register_backend_details(demo::kDemoBackendId, std::make_unique<demo::DemoBackendDetails>());
    register_backend_details(onednn::kOnednnBackendId, std::make_unique<onednn::OnednnBackendDetails>());
  });
}

}  // namespace etc
