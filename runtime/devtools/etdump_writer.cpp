#include "runtime/devtools/etdump_writer.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "runtime/devtools/etdump_generated.h"

namespace etc {
namespace {

namespace efb = etdump::fb;

// A flatbuffer addresses at most 2 GiB; leave room for the tables.
constexpr uint64_t kMaxEtdumpBytes = (uint64_t{1} << 31) - (uint64_t{64} << 20);

struct RunEvents {
  uint64_t start = 0, end = 0;
  std::vector<flatbuffers::Offset<efb::ProfileEvent>> profile;
  std::vector<flatbuffers::Offset<efb::DebugEvent>> debug;
};

efb::EventKind kind_of(RecordedEventKind kind) {
  return kind == RecordedEventKind::kInstruction || kind == RecordedEventKind::kInstructionOutput
             ? efb::EventKind::Instruction
             : efb::EventKind::Delegate;
}

uint64_t relative(uint64_t t, uint64_t base) { return t >= base ? t - base : 0; }

class Writer {
 public:
  // Events logged before any run began count as one run.
  explicit Writer(const EventRecorder& recorder)
      : recorder_(recorder), runs_(std::max<uint32_t>(1, recorder.num_runs())) {}

  std::vector<uint8_t> write(const EtdumpHeader& header) {
    // Run starts first: event times are relative to them.
    for (size_t i = 0; i < recorder_.num_events(); ++i) {
      const RecordedEvent& e = recorder_.event(i);
      if (e.kind == RecordedEventKind::kRun && e.run < runs_.size()) {
        runs_[e.run].start = e.start_time;
        runs_[e.run].end = e.end_time;
      }
    }
    for (size_t i = 0; i < recorder_.num_events(); ++i) add(recorder_.event(i));
    std::vector<flatbuffers::Offset<efb::Run>> runs;
    for (const RunEvents& r : runs_)
      runs.push_back(efb::CreateRun(fbb_, relative(r.end, r.start), fbb_.CreateVector(r.profile),
                                    fbb_.CreateVector(r.debug)));
    std::vector<flatbuffers::Offset<efb::LoadTimeDelegate>> load_time;
    for (const EventRecorder::LoadTimeDelegate& d : recorder_.load_time_delegates()) {
      std::vector<flatbuffers::Offset<efb::MapEntry>> map;
      for (const auto& e : d.map)
        map.push_back(efb::CreateMapEntry(fbb_, e.id, e.name.empty() ? 0 : fbb_.CreateString(e.name),
                                          fbb_.CreateVector(e.handles)));
      load_time.push_back(efb::CreateLoadTimeDelegate(fbb_, d.delegate_index, fbb_.CreateString(d.backend_id),
                                                      d.first_instruction, d.last_instruction,
                                                      fbb_.CreateVector(map)));
    }
    const auto root = efb::CreateETDump(
        fbb_, kEtdumpVersion, fbb_.CreateString(header.producer), fbb_.CreateString(header.program_name),
        header.program_fingerprint, fbb_.CreateString("ns"), fbb_.CreateVector(runs),
        recorder_.dropped_events(), recorder_.dropped_bytes(), recorder_.rejected_events(), data_,
        load_time.empty() ? 0 : fbb_.CreateVector(load_time));
    fbb_.FinishSizePrefixed(root, kEtdumpIdentifier);
    return {fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize()};
  }

  // Tensor bytes go into one data vector, created before any table.
  void write_data() {
    uint8_t* out = nullptr;
    data_ = fbb_.CreateUninitializedVector(data_size(), &out);
    uint64_t offset = 0;
    for (size_t i = 0; i < recorder_.num_events(); ++i) {
      const RecordedEvent& e = recorder_.event(i);
      if (!is_output(e)) continue;
      const Span<const uint8_t> bytes = recorder_.bytes_of(e);
      if (!bytes.empty()) std::memcpy(out + offset, bytes.data(), bytes.size());
      data_offsets_.push_back(offset);
      offset += padded(bytes.size());
    }
  }

  uint64_t data_size() const {
    uint64_t total = 0;
    for (size_t i = 0; i < recorder_.num_events(); ++i)
      if (is_output(recorder_.event(i))) total += padded(recorder_.event(i).bytes_size);
    return total;
  }

 private:
  static bool is_output(const RecordedEvent& e) {
    return e.kind == RecordedEventKind::kInstructionOutput || e.kind == RecordedEventKind::kDelegateOutput;
  }
  static uint64_t padded(uint64_t size) { return (size + 7) / 8 * 8; }

  flatbuffers::Offset<flatbuffers::String> name(const RecordedEvent& e) {
    const std::string_view n = recorder_.name_of(e);
    return n.empty() ? 0 : fbb_.CreateString(n.data(), n.size());
  }

  void add(const RecordedEvent& e) {
    if (e.kind == RecordedEventKind::kRun) return;
    RunEvents& run = runs_[std::min<size_t>(e.run, runs_.size() - 1)];
    if (is_output(e)) {
      const auto shape = fbb_.CreateVector(e.dims, e.rank);
      run.debug.push_back(efb::CreateDebugEvent(fbb_, kind_of(e.kind), e.instruction, e.delegate_index,
                                                e.output_index, name(e), e.delegate_debug_id,
                                                static_cast<efb::DType>(e.dtype), shape,
                                                data_offsets_[next_output_++], e.bytes_size));
      return;
    }
    const Span<const uint8_t> metadata = recorder_.bytes_of(e);
    const auto meta = metadata.empty() ? 0 : fbb_.CreateVector(metadata.data(), metadata.size());
    run.profile.push_back(efb::CreateProfileEvent(
        fbb_, kind_of(e.kind), e.instruction, e.delegate_index, name(e), e.delegate_debug_id,
        relative(e.start_time, run.start), relative(e.end_time, run.start), meta));
  }

  const EventRecorder& recorder_;
  flatbuffers::FlatBufferBuilder fbb_{1 << 16};
  std::vector<RunEvents> runs_;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data_;
  std::vector<uint64_t> data_offsets_;
  size_t next_output_ = 0;
};

}  // namespace

Result<std::vector<uint8_t>> write_etdump(const EventRecorder& recorder, const EtdumpHeader& header) {
  try {
    Writer writer(recorder);
    // Names and metadata live in the recorder's data buffer, which bounds
    // them too: together they stay under what a flatbuffer can address.
    if (writer.data_size() + recorder.data().size() + recorder.num_events() * 128 > kMaxEtdumpBytes)
      return fail(Error::InvalidArgument, "the recording is too large for one ETDump (",
                  std::to_string(recorder.data().size()), " bytes of data, ",
                  std::to_string(recorder.num_events()), " events); record fewer runs or outputs");
    writer.write_data();
    return writer.write(header);
  } catch (const std::bad_alloc&) {
    return fail(Error::MemoryAllocationFailed, "out of memory while writing the ETDump");
  }
}

}  // namespace etc
