#include "compiler/devtools/etdump_reader.h"

#include <cstring>

#include "compiler/common/compile_error.h"
#include "runtime/core/shape.h"
#include "runtime/core/vector_alignment.h"
#include "runtime/devtools/etdump_generated.h"
#include "runtime/devtools/etdump_writer.h"
#include "runtime/executor/file_data.h"

namespace etc::devtools {
namespace {

namespace efb = etdump::fb;

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

ProfileEvent read_profile(const efb::ProfileEvent& e) {
  ProfileEvent out;
  out.in_delegate = e.kind() == efb::EventKind::Delegate;
  out.instruction = e.instruction();
  out.delegate_index = e.delegate_index();
  out.name = str(e.name());
  out.delegate_debug_id = e.delegate_debug_id();
  out.start_ns = e.start_ns();
  out.end_ns = e.end_ns();
  if (e.metadata()) out.metadata.assign(e.metadata()->begin(), e.metadata()->end());
  return out;
}

class Reader {
 public:
  Reader(const efb::ETDump& root, const std::string& name) : root_(root), name_(name) {}

  DebugEvent read_debug(const efb::DebugEvent& e, size_t run, size_t index) const {
    const std::string where = "run " + std::to_string(run) + ", debug event " + std::to_string(index);
    DebugEvent out;
    out.in_delegate = e.kind() == efb::EventKind::Delegate;
    out.instruction = e.instruction();
    out.delegate_index = e.delegate_index();
    out.output_index = e.output_index();
    out.name = str(e.name());
    out.delegate_debug_id = e.delegate_debug_id();
    out.dtype = static_cast<DType>(e.dtype());
    if (!dtype_valid(out.dtype) || out.dtype == DType::Invalid)
      corrupt(where + " has dtype " + std::to_string(static_cast<int>(e.dtype())));
    if (misaligned_8(e.shape())) corrupt(where + " has a misaligned shape");
    if (e.shape()) out.shape.assign(e.shape()->begin(), e.shape()->end());
    if (out.shape.size() > static_cast<size_t>(kMaxRank))
      corrupt(where + " has rank " + std::to_string(out.shape.size()));
    // Checked product: a hostile shape must not overflow into a small size.
    uint64_t numel = 1;
    for (int64_t d : out.shape) {
      if (d < 0 || (d > 0 && numel > (uint64_t{1} << 62) / static_cast<uint64_t>(d)))
        corrupt(where + " has a bad dimension " + std::to_string(d));
      numel *= static_cast<uint64_t>(d);
    }
    if (e.data_size() == 0) return out;  // bytes dropped by the recorder
    const uint64_t expected = numel * dtype_size(out.dtype);
    if (e.data_size() != expected)
      corrupt(where + " holds " + std::to_string(e.data_size()) + " bytes, its shape needs " +
              std::to_string(expected));
    const uint64_t available = root_.data() ? root_.data()->size() : 0;
    if (e.data_offset() > available || available - e.data_offset() < e.data_size())
      corrupt(where + "'s data [" + std::to_string(e.data_offset()) + ", +" + std::to_string(e.data_size()) +
              ") lies outside the data section (" + std::to_string(available) + " bytes)");
    const uint8_t* begin = root_.data()->data() + e.data_offset();
    out.data.assign(begin, begin + e.data_size());
    return out;
  }

  [[noreturn]] void corrupt(const std::string& what) const {
    throw CompileError(name_ + ": corrupt ETDump: " + what);
  }

 private:
  const efb::ETDump& root_;
  const std::string& name_;
};

}  // namespace

Etdump parse_etdump(const uint8_t* data, size_t size, const std::string& name) {
  if (size < 12 || !flatbuffers::BufferHasIdentifier(data + 4, kEtdumpIdentifier))
    throw CompileError(name + ": not an ETDump (missing file identifier '" + std::string(kEtdumpIdentifier) +
                       "'); `etc run --etdump FILE` writes one");
  uint32_t fb_size = 0;
  std::memcpy(&fb_size, data, 4);
  if (uint64_t{fb_size} + 4 > size)
    throw CompileError(name + ": truncated ETDump (header says " + std::to_string(uint64_t{fb_size} + 4) +
                       " bytes, file has " + std::to_string(size) + ")");
  flatbuffers::Verifier verifier(data, 4 + static_cast<size_t>(fb_size), /*max_depth=*/16,
                                 /*max_tables=*/100000000);
  if (!verifier.VerifySizePrefixedBuffer<efb::ETDump>(kEtdumpIdentifier))
    throw CompileError(name + ": corrupt ETDump (flatbuffer verification failed)");
  const efb::ETDump& root = *flatbuffers::GetSizePrefixedRoot<efb::ETDump>(data);
  if (root.version() != kEtdumpVersion)
    throw CompileError(name + ": ETDump version " + std::to_string(root.version()) +
                       ", this etc reads version " + std::to_string(kEtdumpVersion));
  Etdump out;
  out.version = root.version();
  out.producer = str(root.producer());
  out.program_name = str(root.program_name());
  out.program_fingerprint = root.program_fingerprint();
  out.dropped_events = root.dropped_events();
  out.dropped_bytes = root.dropped_bytes();
  out.rejected_events = root.rejected_events();
  if (root.load_time_delegates())
    for (const efb::LoadTimeDelegate* d : *root.load_time_delegates()) {
      LoadTimeDelegate& o = out.load_time_delegates.emplace_back();
      o.delegate_index = d->delegate_index();
      o.backend_id = str(d->backend_id());
      o.first_instruction = d->first_instruction();
      o.last_instruction = d->last_instruction();
      if (d->debug_handle_map())
        for (const efb::MapEntry* e : *d->debug_handle_map()) {
          LoadTimeDelegate::Entry& entry = o.map.emplace_back();
          entry.id = e->int_id();
          entry.name = str(e->string_id());
          if (e->debug_handles())
            entry.handles.assign(e->debug_handles()->begin(), e->debug_handles()->end());
        }
    }
  const Reader reader(root, name);
  if (root.runs() == nullptr) return out;
  for (size_t r = 0; r < root.runs()->size(); ++r) {
    const efb::Run& run = *root.runs()->Get(static_cast<flatbuffers::uoffset_t>(r));
    EtdumpRun& o = out.runs.emplace_back();
    o.duration_ns = run.duration_ns();
    if (run.profile_events())
      for (const efb::ProfileEvent* e : *run.profile_events()) o.profile_events.push_back(read_profile(*e));
    if (run.debug_events())
      for (size_t i = 0; i < run.debug_events()->size(); ++i)
        o.debug_events.push_back(
            reader.read_debug(*run.debug_events()->Get(static_cast<flatbuffers::uoffset_t>(i)), r, i));
  }
  return out;
}

Etdump read_etdump_file(const std::string& path) {
  Result<FileData> data = FileData::map(path);
  if (!data.ok()) throw CompileError(data.message());
  return parse_etdump(data->data(), data->size(), path);
}

}  // namespace etc::devtools
