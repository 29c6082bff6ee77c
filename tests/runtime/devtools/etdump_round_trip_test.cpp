// ETDump: what the writer puts in, the reader gets back; damaged files are
// clear errors.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/devtools/etdump_reader.h"
#include "runtime/devtools/etdump_writer.h"
#include "runtime/devtools/event_recorder.h"

namespace etc {
namespace {

struct Recorded {
  std::vector<RecordedEvent> events = std::vector<RecordedEvent>(64);
  std::vector<uint8_t> data = std::vector<uint8_t>(4096);
  EventRecorder recorder{Span<RecordedEvent>(events), Span<uint8_t>(data)};
};

// Two runs: an instruction with a delegate event inside (int id, metadata)
// and a logged output, then one with a string-identified event.
std::vector<uint8_t> sample_etdump() {
  static Recorded rec;
  EventRecorder& r = rec.recorder;
  r.reset();
  r.set_intermediate_outputs(true);
  r.begin_run();
  r.set_instruction(0, 2);
  const EventTracerEntry call = r.start_profiling(0);
  const uint8_t meta[2] = {0xab, 0xcd};
  const uint64_t t0 = event_tracer_now();
  event_tracer_log_profiling_delegate(&r, {}, 9, t0, t0 + 5, meta, 2);
  std::vector<int64_t> values = {1, -2, 3, -4, 5, -6};
  event_tracer_log_output_delegate(&r, {}, 9, Tensor{TensorSpec{DType::Int64, Shape{2, 3}}, values.data()});
  r.end_profiling(call);
  r.end_run();
  r.begin_run();
  r.set_instruction(1, -1);
  r.end_profiling(r.start_profiling(1));
  event_tracer_end_profiling_delegate(&r, event_tracer_start_profiling_delegate(&r, "mul+add", -1));
  r.end_run();
  auto bytes = write_etdump(r, EtdumpHeader{"test", "model.etp", 0x1234});
  REQUIRE(bytes.ok());
  return bytes.get();
}

TEST_CASE("an ETDump reads back as written", "[devtools]") {
  const std::vector<uint8_t> bytes = sample_etdump();
  const devtools::Etdump dump = devtools::parse_etdump(bytes.data(), bytes.size(), "x.etdump");
  CHECK(dump.version == kEtdumpVersion);
  CHECK(dump.producer == "test");
  CHECK(dump.program_name == "model.etp");
  CHECK(dump.program_fingerprint == 0x1234);
  REQUIRE(dump.runs.size() == 2);
  const devtools::EtdumpRun& first = dump.runs[0];
  REQUIRE(first.profile_events.size() == 2);  // the delegate event, then the instruction
  const devtools::ProfileEvent& inner = first.profile_events[0];
  CHECK(inner.in_delegate);
  CHECK(inner.delegate_debug_id == 9);
  CHECK(inner.name.empty());
  CHECK(inner.instruction == 0);
  CHECK(inner.delegate_index == 2);
  CHECK(inner.duration_ns() == 5);
  CHECK(inner.metadata == std::vector<uint8_t>{0xab, 0xcd});
  const devtools::ProfileEvent& outer = first.profile_events[1];
  CHECK_FALSE(outer.in_delegate);
  CHECK(outer.start_ns <= inner.start_ns);
  CHECK(outer.end_ns >= inner.end_ns);
  CHECK(first.duration_ns >= outer.end_ns);
  REQUIRE(first.debug_events.size() == 1);
  const devtools::DebugEvent& out = first.debug_events[0];
  CHECK(out.dtype == DType::Int64);
  CHECK(out.shape == std::vector<int64_t>{2, 3});
  REQUIRE(out.data.size() == 6 * sizeof(int64_t));
  int64_t last = 0;
  std::memcpy(&last, out.data.data() + 5 * sizeof(int64_t), sizeof(last));
  CHECK(last == -6);
  REQUIRE(dump.runs[1].profile_events.size() == 2);
  CHECK(dump.runs[1].profile_events[1].name == "mul+add");
  CHECK(dump.runs[1].profile_events[1].delegate_debug_id == -1);
  CHECK(dump.dropped_events == 0);
}

void check_refused(const std::vector<uint8_t>& bytes, const std::string& expected) {
  try {
    devtools::parse_etdump(bytes.data(), bytes.size(), "bad.etdump");
    FAIL("accepted a damaged ETDump");
  } catch (const CompileError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("bad.etdump: " + expected) == 0);
  }
}

TEST_CASE("a truncated, mislabelled or newer ETDump is a clear error", "[devtools]") {
  const std::vector<uint8_t> bytes = sample_etdump();
  check_refused({}, "not an ETDump");
  check_refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10), "not an ETDump");
  for (size_t keep : {size_t{16}, bytes.size() / 2, bytes.size() - 1})
    check_refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)),
                  "truncated ETDump");
  std::vector<uint8_t> wrong_id = bytes;
  wrong_id[8] = 'X';
  check_refused(wrong_id, "not an ETDump");
  std::vector<uint8_t> program_file = bytes;
  std::memcpy(program_file.data() + 8, "ETP1", 4);
  check_refused(program_file, "not an ETDump");
}

TEST_CASE("random damage to an ETDump never crashes the reader", "[devtools]") {
  const std::vector<uint8_t> bytes = sample_etdump();
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> damaged = bytes;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f)
      damaged[std::uniform_int_distribution<size_t>(0, damaged.size() - 1)(rng)] =
          static_cast<uint8_t>(rng());
    try {
      const devtools::Etdump dump = devtools::parse_etdump(damaged.data(), damaged.size(), "bad.etdump");
      // Accepted: every debug event's bytes match its shape.
      for (const devtools::EtdumpRun& run : dump.runs)
        for (const devtools::DebugEvent& e : run.debug_events) {
          size_t n = 1;
          for (int64_t d : e.shape) n *= static_cast<size_t>(d);
          if (!e.data.empty()) CHECK(e.data.size() == n * dtype_size(e.dtype));
        }
    } catch (const CompileError& e) {
      ++refused;
      CHECK(std::string(e.what()).find("bad.etdump: ") == 0);
    }
  }
  CHECK(refused > 0);
}

}  // namespace
}  // namespace etc
