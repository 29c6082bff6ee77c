#pragma once
// Writes what an EventRecorder holds as an ETDump (etdump.fbs): one Run per
// recorded run, event times relative to the start of their run. Writing
// allocates (it happens after the runs, never during execute).
//
// Errors: InvalidArgument when the recording is too large for one
// flatbuffer (2 GiB); MemoryAllocationFailed.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/devtools/event_recorder.h"

namespace etc {

inline constexpr uint32_t kEtdumpVersion = 1;
inline constexpr char kEtdumpIdentifier[] = "ETD1";

struct EtdumpHeader {
  std::string producer;
  std::string program_name;
  uint64_t program_fingerprint = 0;
};

Result<std::vector<uint8_t>> write_etdump(const EventRecorder& recorder, const EtdumpHeader& header);

}  // namespace etc
