// libetc_onednn.so: the oneDNN backend as a library of its own, loaded the
// first time a program needs it (runtime/backend/loaded_backend.h), so that
// a process that never runs oneDNN never loads libdnnl.
#include "runtime/backends/onednn/onednn_backend.h"

extern "C" __attribute__((visibility("default"))) etc::BackendInterface* etc_onednn_backend() {
  return etc::onednn::onednn_backend();
}
