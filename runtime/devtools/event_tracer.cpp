#include "runtime/devtools/event_tracer.h"

#include <chrono>

namespace etc {

uint64_t event_tracer_now() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

}  // namespace etc
