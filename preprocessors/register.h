#pragma once
// Registers the ahead-of-time half (BackendDetails) of every built-in backend.
// Adding a backend adds one line to register.cpp. Safe to call more than once.

namespace etc {

void register_builtin_preprocessors();

// The XNNPACK preprocessor alone (preprocessors/xnnpack/register_xnnpack.cpp):
// what the load-time XNNPACK delegate needs, without linking the other
// backends' compiler halves (oneDNN's prepack links libdnnl). Safe to call
// more than once, before or after register_builtin_preprocessors.
void register_xnnpack_preprocessor();

}  // namespace etc
