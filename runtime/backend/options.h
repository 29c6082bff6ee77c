#pragma once
// Runtime options: settings chosen when a program is loaded (by `etc run`
// flags or an embedding application), visible to every backend at init.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace etc {

class Delegate;  // runtime/delegate/delegate.h

// How finely a delegate splits its work for developer tools.
enum class DelegateDetail : uint8_t {
  // As fast as the backend can run: fused nodes, few events.
  kFused,
  // Every profiling event belongs to exactly one entry of the delegate's
  // debug handle map (XNNPACK: every node runs as its own stage).
  kPerNode,
  // As kPerNode, and every node's output is computed on its own (nothing
  // folded into a neighbour), so each can be logged as an intermediate output.
  kNodeOutputs,
};

struct RuntimeOptions {
  // Delegates' threads, and the portable kernels' that ask (Kernel::wants_threads).
  int num_threads = 0;  // 0: one per CPU this process may run on (its affinity mask)
  // num_threads is the most a delegate runs on: one whose run is too little
  // work to gain from splitting runs on the calling thread instead (each
  // backend judges its own; XNNPACK: backends/xnnpack/work_estimate.h).
  // False holds every delegate to num_threads (tests of threaded kernels).
  bool fit_threads_to_work = true;
  // Bytes of per-call scratch each Method offers its delegates
  // (BackendExecutionContext::get_temp_allocator).
  size_t temp_allocator_bytes = 1 << 20;
  DelegateDetail delegate_detail = DelegateDetail::kFused;
  // Iterations one Loop instruction may run before execute fails (0: no
  // limit). A loop's trip count and condition come from the program and its
  // inputs; an application running untrusted ones bounds the time here.
  int64_t max_loop_iterations = 0;
  // A load-time delegate (runtime/delegate/delegate.h) that may replace
  // ranges of portable kernels when a Method is initialised; null: none. It
  // must outlive the Method.
  Delegate* delegate = nullptr;
  // Backends to treat as unavailable on this machine (a deployment switch,
  // and how tests exercise fallbacks): their delegates run their portable
  // fallback, or fail init when the program has none.
  std::vector<std::string> disabled_backends;
};

}  // namespace etc
