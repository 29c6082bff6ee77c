#include "partitioners/register.h"

#include <mutex>

#include "partitioners/demo/demo_partitioner.h"
#include "partitioners/onednn/onednn_partitioner.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"

namespace etc {

void register_builtin_partitioners() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_partitioner("demo", [](std::vector<CompileSpec> specs) {
      return std::make_unique<demo::DemoPartitioner>(std::move(specs));
    });
    register_partitioner("onednn", [](std::vector<CompileSpec> specs) {
      return std::make_unique<onednn::OnednnPartitioner>(std::move(specs));
    });
    register_partitioner("xnnpack", [](std::vector<CompileSpec> specs) {
      return std::make_unique<xnnpack::XnnpackPartitioner>(std::move(specs));
    });
  });
}

}  // namespace etc
