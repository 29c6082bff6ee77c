#include "runtime/core/error.h"

namespace etc {

const char* to_string(Error error) {
  switch (error) {
    case Error::Ok: return "Ok";
    case Error::Internal: return "Internal";
    case Error::InvalidState: return "InvalidState";
    case Error::NotSupported: return "NotSupported";
    case Error::NotImplemented: return "NotImplemented";
    case Error::InvalidArgument: return "InvalidArgument";
    case Error::InvalidType: return "InvalidType";
    case Error::InvalidShape: return "InvalidShape";
    case Error::OutOfRange: return "OutOfRange";
    case Error::NotFound: return "NotFound";
    case Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::AccessFailed: return "AccessFailed";
    case Error::RegistryFull: return "RegistryFull";
    case Error::AlreadyRegistered: return "AlreadyRegistered";
    case Error::InvalidProgram: return "InvalidProgram";
    case Error::IncompatibleVersion: return "IncompatibleVersion";
    case Error::DelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case Error::DelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case Error::DelegateInvalidHandle: return "DelegateInvalidHandle";
    case Error::DelegateNotRegistered: return "DelegateNotRegistered";
    case Error::DelegateUnavailable: return "DelegateUnavailable";
  }
  return "Unknown";
}

}  // namespace etc
