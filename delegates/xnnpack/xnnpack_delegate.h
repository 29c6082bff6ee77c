#pragma once
// The XNNPACK backend as a load-time delegate (runtime/delegate/delegate.h):
// a program compiled without --backend gets XNNPACK when it is loaded
// (`etc run PROGRAM --runtime-delegate xnnpack`).
//
// build() rebuilds each kernel as an edge node (op, attributes, tensors; a
// program constant as a constant) and asks the XNNPACK partitioner's node
// rule which it takes. Each maximal run of taken kernels, unbroken in
// execution order, is lowered exactly as ahead of time (to_backend with the
// XNNPACK preprocess: the same lowering, layout handling and blob) and runs
// on the XNNPACK backend's runtime half (native nodes, stages, conversion to
// NCHW at the run's edges), which also resizes it. One copy of the backend,
// used at load time instead of ahead of time. A run that the preprocess
// refuses stays on the portable kernels (its reason is kept, see runs()).
//
// This delegate links the compiler's IR and the XNNPACK preprocess, which
// the deployable runtime does not: it is for hosts that load programs
// compiled without a backend (the `etc` tool, an application that links
// etc_delegate_xnnpack).

#include <string>
#include <vector>

#include "runtime/delegate/delegate.h"

namespace etc::xnnpack {

class XnnpackDelegate : public Delegate {
 public:
  std::string_view name() const override { return "xnnpack"; }
  // NotSupported when XNNPACK cannot run on this CPU.
  Status init() override;
  Status build(DelegateModel& model) override;

  // What build decided, per run of kernels the node rule took: taken (its
  // kernels replaced) or left on the portable kernels, and why.
  struct Run {
    size_t from = 0, end = 0;  // kernels [from, end)
    bool taken = false;
    std::string reason;  // when not taken
  };
  const std::vector<Run>& runs() const { return runs_; }

 private:
  std::vector<Run> runs_;
};

}  // namespace etc::xnnpack
