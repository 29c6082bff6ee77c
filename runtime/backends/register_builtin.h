#pragma once
// Explicit registration of the backends built into this runtime, so that no
// backend depends on a static initialiser surviving the link. Call once at
// start-up, before creating Methods (the CLI does).

#include "runtime/core/result.h"

namespace etc {

// Registers every built-in backend (demo, xnnpack) in the process-wide
// registry. Idempotent: a backend this function registered earlier is left
// as it is. Fails (AlreadyRegistered, RegistryFull) when the name is taken
// by a different implementation or the registry is full.
Status register_builtin_backends();

}  // namespace etc
