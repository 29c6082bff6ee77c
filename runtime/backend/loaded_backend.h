#pragma once
// A backend in a shared library of its own, loaded the first time a program
// needs it. A registry entry stands for it from start-up (the name is known),
// and a process that never runs the backend never loads the library or what
// it links: the oneDNN backend's libdnnl and libgomp took ~1 ms of every
// start of `etc run` here, for programs without a oneDNN delegate too.
//
// The library exports `entry`, an extern "C" function taking no arguments
// and returning the backend's BackendInterface*; it is looked for in the
// directory of ETC_BACKEND_DIR when that is set, else beside the executable,
// else in `build_dir` (where the build put it). It must be built from the
// same etc headers by the same compiler: the interface is C++.

#include <memory>
#include <string>

#include "runtime/backend/interface.h"

namespace etc {

// A BackendInterface that loads `library` (a file name) on first use and
// forwards to the backend it holds. is_available() is false when the library
// cannot be loaded, and why_unavailable() says why (dlerror's words). A
// loaded library stays loaded; the backend it returned must outlive every
// Method using it (register_builtin_backends keeps its loaders for the
// process).
std::unique_ptr<BackendInterface> loaded_backend(const char* library, const char* entry,
                                                 const char* build_dir);

}  // namespace etc
