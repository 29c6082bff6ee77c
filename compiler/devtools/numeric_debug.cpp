#include "compiler/devtools/numeric_debug.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "compiler/common/compile_error.h"
#include "compiler/devtools/program_debug_info.h"
#include "runtime/devtools/etdump_writer.h"
#include "runtime/devtools/event_recorder.h"
#include "runtime/executor/method.h"

namespace etc::devtools {
namespace {

// Reserved, not touched: only what the run logs is ever paged in.
constexpr size_t kDataBytes = size_t{2} << 30;

std::vector<double> to_doubles(const DebugEvent& e) {
  const size_t n = e.data.size() / std::max<size_t>(1, dtype_size(e.dtype));
  std::vector<double> out(n);
  const uint8_t* p = e.data.data();
  for (size_t i = 0; i < n; ++i) {
    switch (e.dtype) {
#define ETC_TO_DOUBLE(E, T, N)                     \
  case DType::E: {                                 \
    T v;                                           \
    std::memcpy(&v, p + i * sizeof(T), sizeof(T)); \
    out[i] = static_cast<double>(v);               \
    break;                                         \
  }
      ETC_FOR_EACH_DTYPE(ETC_TO_DOUBLE)
#undef ETC_TO_DOUBLE
      case DType::Invalid: break;
    }
  }
  return out;
}

// One logged output and the ONNX node it belongs to.
struct Keyed {
  const DebugEvent* event = nullptr;
  std::string placement;
  std::vector<int32_t> handles;
};

// Outputs of one run by key (largest debug handle), and the keys in the
// order their first output was logged.
struct KeyedOutputs {
  std::map<int32_t, std::vector<Keyed>> by_key;
  std::vector<int32_t> order;
};

KeyedOutputs key_outputs(const Program& program, const ProgramDebugInfo& info, const EtdumpRun& run) {
  KeyedOutputs out;
  const auto* instructions = program.plan().instructions();
  for (const DebugEvent& e : run.debug_events) {
    std::vector<int32_t> handles;
    std::string placement = "portable";
    if (e.in_delegate) {
      if (e.delegate_index < 0) continue;
      const auto d = static_cast<size_t>(e.delegate_index);
      const std::vector<int32_t>* entry = info.delegate_handles(d, e.name, e.delegate_debug_id);
      if (entry == nullptr) continue;
      handles = *entry;
      placement = info.backend_id(d);
    } else {
      // A delegate call's own outputs are its last nodes' outputs, logged
      // inside it already.
      if (e.delegate_index >= 0 || e.instruction < 0 || instructions == nullptr ||
          static_cast<uint32_t>(e.instruction) >= instructions->size())
        continue;
      handles = info.instruction_handles(static_cast<size_t>(e.instruction));
    }
    if (handles.empty()) continue;
    const int32_t key = *std::max_element(handles.begin(), handles.end());
    if (key < 0) continue;
    auto [it, inserted] = out.by_key.try_emplace(key);
    if (inserted) out.order.push_back(key);
    it->second.push_back(Keyed{&e, placement, std::move(handles)});  // sorted
  }
  return out;
}

void compare(const DebugEvent& ref, const DebugEvent& test, NodeGap& gap) {
  if (ref.data.empty() || test.data.empty()) {
    gap.note = "bytes not recorded";
    return;
  }
  const std::vector<double> r = to_doubles(ref), t = to_doubles(test);
  if (r.size() != t.size()) {
    gap.note = "element counts differ (" + std::to_string(r.size()) + " vs " + std::to_string(t.size()) + ")";
    return;
  }
  double max_abs = 0, max_ref = 0, signal = 0, noise = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const double d = std::isnan(r[i]) && std::isnan(t[i]) ? 0.0 : std::fabs(r[i] - t[i]);
    max_abs = std::max(max_abs, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
    if (std::isfinite(r[i])) max_ref = std::max(max_ref, std::fabs(r[i]));
    signal += std::isfinite(r[i]) ? r[i] * r[i] : 0.0;
    noise += std::isfinite(d) ? d * d : std::numeric_limits<double>::infinity();
  }
  gap.compared = true;
  gap.max_abs_error = std::max(gap.max_abs_error, max_abs);
  const double rel = max_abs == 0  ? 0.0
                     : max_ref > 0 ? max_abs / max_ref
                                   : std::numeric_limits<double>::infinity();
  gap.relative_error = std::max(gap.relative_error, rel);
  const double snr = noise == 0    ? std::numeric_limits<double>::infinity()
                     : signal == 0 ? -std::numeric_limits<double>::infinity()
                                   : 10.0 * std::log10(signal / noise);
  gap.snr_db = std::min(gap.snr_db, snr);
}

void name_node(const ProgramDebugInfo& info, const std::vector<int32_t>& handles, NodeGap& gap) {
  gap.covers = info.name(handles).names;
  if (const OnnxNode* n = info.node(gap.handle)) {
    gap.onnx_name = n->name;
    gap.onnx_op_type = n->op_type;
  }
}

}  // namespace

size_t GapReport::num_compared() const {
  return static_cast<size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodeGap& g) { return g.compared; }));
}

Etdump record_intermediate_outputs(const Program& program, const std::vector<InputTensor>& inputs,
                                   RuntimeOptions options) {
  const size_t instructions = program.plan().instructions() ? program.plan().instructions()->size() : 0;
  std::vector<RecordedEvent> events(8 * instructions + 65536);
  std::unique_ptr<uint8_t[]> data(new uint8_t[kDataBytes]);
  EventRecorder recorder(events, Span<uint8_t>(data.get(), kDataBytes));
  recorder.set_intermediate_outputs(true);
  auto method = Method::init(program, 0, options, &recorder);
  if (!method.ok()) throw CompileError(method.message());
  Method& m = *method.get();
  if (inputs.size() != m.num_inputs())
    throw CompileError(program.name() + ": " + std::to_string(inputs.size()) +
                       " inputs given, the program has " + std::to_string(m.num_inputs()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (Status s = m.set_input(i, inputs[i].spec, inputs[i].bytes.data()); !s.ok())
      throw CompileError(program.name() + ": " + s.message());
  if (Status s = m.execute(); !s.ok())
    throw CompileError(program.name() + ": execution failed: " + s.message());
  if (recorder.dropped_events() + recorder.dropped_bytes() > 0)
    throw CompileError(program.name() +
                       ": the intermediate outputs of one run exceed what can be recorded (" +
                       std::to_string(recorder.dropped_events()) + " events, " +
                       std::to_string(recorder.dropped_bytes()) + " bytes dropped)");
  Result<std::vector<uint8_t>> bytes =
      write_etdump(recorder, EtdumpHeader{"etc debug", program.name(), program.fingerprint()});
  if (!bytes.ok()) throw CompileError(program.name() + ": " + bytes.message());
  return parse_etdump(bytes->data(), bytes->size(), program.name() + " (recording)");
}

GapReport compare_intermediate_outputs(const Program& reference, const Etdump& reference_dump,
                                       const Program& test, const Etdump& test_dump, double tolerance) {
  GapReport report;
  report.tolerance = tolerance;
  if (reference_dump.runs.empty() || test_dump.runs.empty()) return report;
  if (const auto* delegates = test.fb().delegates())
    for (uint32_t d = 0; d < delegates->size(); ++d) {
      const auto& events = test_dump.runs.front().debug_events;
      const bool logged = std::any_of(events.begin(), events.end(), [d](const DebugEvent& e) {
        return e.in_delegate && e.delegate_index == static_cast<int32_t>(d);
      });
      if (!logged)
        report.silent_delegates.push_back("delegate " + std::to_string(d) + " (" +
                                          delegates->Get(d)->backend_id()->str() + ")");
    }
  const ProgramDebugInfo ref_info(reference), test_info(test);
  const KeyedOutputs ref = key_outputs(reference, ref_info, reference_dump.runs.front());
  const KeyedOutputs tst = key_outputs(test, test_info, test_dump.runs.front());
  for (int32_t key : tst.order) {
    const std::vector<Keyed>& t = tst.by_key.at(key);
    NodeGap gap;
    gap.handle = key;
    gap.placement = t.back().placement;
    gap.shape = t.back().event->shape;
    name_node(test_info, t.back().handles, gap);
    const auto r = ref.by_key.find(key);
    if (r == ref.by_key.end()) {
      gap.note = "no output in the reference (fused there)";
    } else if (r->second.size() == t.size()) {
      for (size_t k = 0; k < t.size(); ++k) compare(*r->second[k].event, *t[k].event, gap);
    } else {
      compare(*r->second.back().event, *t.back().event, gap);
    }
    if (report.first_over < 0 && gap.compared && !(gap.relative_error <= tolerance))
      report.first_over = static_cast<int>(report.nodes.size());
    report.nodes.push_back(std::move(gap));
  }
  return report;
}

}  // namespace etc::devtools
