#pragma once
// Registers the ahead-of-time half (BackendDetails) of every built-in backend.
// Adding a backend adds one line to register.cpp. Safe to call more than once.

namespace etc {

void register_builtin_preprocessors();

}  // namespace etc
