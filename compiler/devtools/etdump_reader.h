#pragma once
// Reads an ETDump file (runtime/devtools/etdump.fbs) into plain data. The
// file is untrusted: the flatbuffer is verified, then every debug event's
// data range, dtype and shape; any defect is a CompileError naming the file
// and the defect, never a crash.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"

namespace etc::devtools {

struct ProfileEvent {
  bool in_delegate = false;  // reported by a backend (else: one instruction)
  int32_t instruction = -1;
  int32_t delegate_index = -1;
  std::string name;  // string identifier (delegate events)
  int64_t delegate_debug_id = -1;
  uint64_t start_ns = 0, end_ns = 0;  // from the start of the run
  std::vector<uint8_t> metadata;

  uint64_t duration_ns() const { return end_ns >= start_ns ? end_ns - start_ns : 0; }
};

struct DebugEvent {
  bool in_delegate = false;
  int32_t instruction = -1;
  int32_t delegate_index = -1;
  int32_t output_index = -1;
  std::string name;
  int64_t delegate_debug_id = -1;
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // empty when the recorder dropped the bytes
};

struct EtdumpRun {
  uint64_t duration_ns = 0;
  std::vector<ProfileEvent> profile_events;
  std::vector<DebugEvent> debug_events;
};

// A delegate made of instructions when the program was loaded (etdump.fbs).
struct LoadTimeDelegate {
  int32_t delegate_index = -1;
  std::string backend_id;
  uint32_t first_instruction = 0, last_instruction = 0;
  struct Entry {
    int64_t id = -1;
    std::string name;
    std::vector<int32_t> handles;
  };
  std::vector<Entry> map;
};

struct Etdump {
  uint32_t version = 0;
  std::string producer;
  std::string program_name;
  uint64_t program_fingerprint = 0;
  std::vector<EtdumpRun> runs;
  uint64_t dropped_events = 0, dropped_bytes = 0, rejected_events = 0;
  std::vector<LoadTimeDelegate> load_time_delegates;
};

// Throws CompileError ("FILE: not an ETDump …", "FILE: corrupt ETDump …",
// "FILE: ETDump version 7, this etc reads version 1").
Etdump read_etdump_file(const std::string& path);
Etdump parse_etdump(const uint8_t* data, size_t size, const std::string& name);

}  // namespace etc::devtools
