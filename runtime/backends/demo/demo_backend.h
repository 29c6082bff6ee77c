#pragma once
// The demo backend's runtime half: interprets the text program written by
// preprocessors/demo (format: demo_format.h) on float32 data.
//
//   init     parses and checks the whole program (demo_program.h), applies
//            the compile spec max_input_elements, allocates constants and
//            intermediates, then frees the processed bytes.
//   execute  checks the argument count, dtypes and element counts, then runs
//            the instructions; no allocation.
//   destroy  frees what init allocated.

#include "runtime/backend/interface.h"

namespace etc::demo {

// The demo backend's implementation. Stateless (all state is in the handles),
// so the same object may be registered under several names. Never null.
BackendInterface* demo_backend();

}  // namespace etc::demo
