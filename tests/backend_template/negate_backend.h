#pragma once
// The runtime half: BackendInterface for blobs of negate_format.h.

#include "runtime/backend/interface.h"

namespace etc::negate {

BackendInterface* negate_backend();

}  // namespace etc::negate
