#pragma once
// Registers every built-in partitioner by name (make_partitioner("demo")).
// Adding a backend adds one line to register.cpp. Safe to call more than once.

namespace etc {

void register_builtin_partitioners();

}  // namespace etc
