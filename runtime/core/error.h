#pragma once
// Error codes returned across the runtime API. Grouped in ranges so a code
// tells which phase failed. The runtime never throws.

#include <cstdint>

namespace etc {

enum class Error : uint32_t {
  // 0x00: success and generic failures.
  Ok = 0x00,
  Internal = 0x01,
  InvalidState = 0x02,
  NotSupported = 0x03,
  NotImplemented = 0x04,
  // 0x10: bad arguments from the caller.
  InvalidArgument = 0x10,
  InvalidType = 0x11,
  InvalidShape = 0x12,
  OutOfRange = 0x13,
  NotFound = 0x14,
  // 0x20: resources.
  MemoryAllocationFailed = 0x20,
  AccessFailed = 0x21,
  RegistryFull = 0x22,
  AlreadyRegistered = 0x23,
  // 0x30: program loading and validation.
  InvalidProgram = 0x30,
  IncompatibleVersion = 0x31,
  // 0x40: delegates.
  DelegateInvalidCompatibility = 0x40,
  DelegateMemoryAllocationFailed = 0x41,
  DelegateInvalidHandle = 0x42,
  DelegateNotRegistered = 0x43,
  DelegateUnavailable = 0x44,
};

// Stable, human-readable name of an error code.
const char* to_string(Error error);

}  // namespace etc
