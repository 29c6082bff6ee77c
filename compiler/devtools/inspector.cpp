#include "compiler/devtools/inspector.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

#include "compiler/common/compile_error.h"
#include "compiler/devtools/program_debug_info.h"

namespace etc::devtools {
namespace {

std::string hex64(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A row's ONNX nodes, name and op type from its handles.
void name_row(const ProgramDebugInfo& info, const std::vector<int32_t>& handles, InspectorRow& row) {
  NamedNodes n = info.name(handles);
  row.onnx_nodes = std::move(n.names);
  row.name = std::move(n.joined_names);
  row.op_type = std::move(n.joined_op_types);
}

std::string handles_key(const std::vector<int32_t>& handles) {
  std::string key;
  for (int32_t h : handles) key += std::to_string(h) + ",";
  return key;
}

// Builds the rows, keyed so that every call of one unit lands in one row.
class RowBuilder {
 public:
  explicit RowBuilder(std::vector<InspectorRow>& rows) : rows_(rows) {}
  size_t last = 0;  // index of the row the last call returned
  InspectorRow& row(const std::string& key, bool& created) {
    const auto [it, inserted] = index_.try_emplace(key, rows_.size());
    created = inserted;
    last = it->second;
    if (inserted) {
      rows_.emplace_back();
      rows_.back().order = rows_.size() - 1;
    }
    return rows_[it->second];
  }

 private:
  std::vector<InspectorRow>& rows_;
  std::map<std::string, size_t> index_;
};

// Sum of the durations of `events` not nested inside another of them.
uint64_t outer_time(std::vector<const ProfileEvent*> events) {
  std::sort(events.begin(), events.end(),
            [](const ProfileEvent* a, const ProfileEvent* b) { return a->start_ns < b->start_ns; });
  uint64_t total = 0, end = 0;
  bool any = false;
  for (const ProfileEvent* e : events) {
    if (any && e->end_ns <= end) continue;
    const uint64_t from = any ? std::max(e->start_ns, end) : e->start_ns;
    total += e->end_ns > from ? e->end_ns - from : 0;
    end = std::max(end, e->end_ns);
    any = true;
  }
  return total;
}

}  // namespace

uint64_t InspectorRow::total_ns() const {
  return std::accumulate(durations_ns.begin(), durations_ns.end(), uint64_t{0});
}
double InspectorRow::mean_ns() const {
  return durations_ns.empty() ? 0.0
                              : static_cast<double>(total_ns()) / static_cast<double>(durations_ns.size());
}
uint64_t InspectorRow::p50_ns() const {
  if (durations_ns.empty()) return 0;
  std::vector<uint64_t> d = durations_ns;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}
uint64_t InspectorRow::min_ns() const {
  return durations_ns.empty() ? 0 : *std::min_element(durations_ns.begin(), durations_ns.end());
}
uint64_t InspectorRow::max_ns() const {
  return durations_ns.empty() ? 0 : *std::max_element(durations_ns.begin(), durations_ns.end());
}

double InspectorSummary::attributed_share() const {
  return delegate_ns == 0 ? 1.0
                          : static_cast<double>(attributed_delegate_ns) / static_cast<double>(delegate_ns);
}

double InspectorSummary::events_gap() const {
  uint64_t events = 0;
  for (const DelegateSummary& d : delegates) events += d.events_ns;
  if (delegate_ns == 0) return 0.0;
  const double diff = static_cast<double>(events) - static_cast<double>(delegate_ns);
  return (diff < 0 ? -diff : diff) / static_cast<double>(delegate_ns);
}

Inspector::Inspector(const Program& program, const Etdump& etdump, InspectorOptions options)
    : program_(program), etdump_(etdump) {
  if (etdump.program_fingerprint != program.fingerprint())
    throw CompileError("the ETDump was recorded from program '" + etdump.program_name + "' (fingerprint " +
                       hex64(etdump.program_fingerprint) + "), not from '" + program.name() +
                       "' (fingerprint " + hex64(program.fingerprint()) + ")");
  ProgramDebugInfo index(program);
  // Delegates a load-time delegate made when the program was loaded.
  for (const LoadTimeDelegate& d : etdump.load_time_delegates)
    if (!index.add_load_time_delegate(d))
      throw CompileError("the ETDump's load-time delegate " + std::to_string(d.delegate_index) +
                         " does not follow the program's " + std::to_string(index.num_delegates()) +
                         " delegates");
  const size_t num_instructions = program.plan().instructions() ? program.plan().instructions()->size() : 0;
  summary_.runs = etdump.runs.size();
  summary_.dropped_events = etdump.dropped_events;
  summary_.dropped_bytes = etdump.dropped_bytes;
  summary_.rejected_events = etdump.rejected_events;
  for (size_t d = 0; d < index.num_delegates(); ++d)
    summary_.delegates.push_back(DelegateSummary{static_cast<int32_t>(d), index.backend_id(d)});

  RowBuilder builder(rows_);
  for (const EtdumpRun& run : etdump.runs) {
    std::vector<int64_t>& event_rows = event_rows_.emplace_back(run.profile_events.size(), -1);
    // Delegate events by the instruction (delegate call) they belong to.
    std::map<int32_t, std::vector<const ProfileEvent*>> inside;
    std::map<int32_t, std::vector<const ProfileEvent*>> attributed;
    for (const ProfileEvent& e : run.profile_events) {
      if (e.instruction < 0 || static_cast<size_t>(e.instruction) >= num_instructions)
        throw CompileError("the ETDump names instruction " + std::to_string(e.instruction) +
                           ", the program has " + std::to_string(num_instructions));
      if (e.delegate_index >= static_cast<int32_t>(index.num_delegates()))
        throw CompileError("the ETDump names delegate " + std::to_string(e.delegate_index) +
                           ", the program has " + std::to_string(index.num_delegates()));
      bool created = false;
      if (!e.in_delegate && index.instruction_is_control(static_cast<size_t>(e.instruction))) {
        const std::vector<int32_t> handles = index.instruction_handles(static_cast<size_t>(e.instruction));
        InspectorRow& row = builder.row("c" + std::to_string(e.instruction), created);
        if (created) {
          row.kind = RowKind::kControl;
          row.placement = "executor";
          name_row(index, handles, row);
          if (row.name.empty()) row.name = "instruction " + std::to_string(e.instruction);
          row.op_type = index.instruction_op(static_cast<size_t>(e.instruction)) + " (its chains included)";
        }
        row.durations_ns.push_back(e.duration_ns());
        event_rows[static_cast<size_t>(&e - run.profile_events.data())] = static_cast<int64_t>(builder.last);
        continue;
      }
      if (!e.in_delegate) {
        summary_.total_ns += e.duration_ns();
        if (e.delegate_index >= 0) {
          summary_.delegate_ns += e.duration_ns();
          summary_.delegates[static_cast<size_t>(e.delegate_index)].total_ns += e.duration_ns();
          continue;  // its overhead row is made below
        }
        summary_.portable_ns += e.duration_ns();
        const std::vector<int32_t> handles = index.instruction_handles(static_cast<size_t>(e.instruction));
        InspectorRow& row = builder.row(
            "p:" + handles_key(handles) + (handles.empty() ? std::to_string(e.instruction) : ""), created);
        if (created) {
          row.placement = "portable";
          name_row(index, handles, row);
          if (row.name.empty()) {
            row.kind = RowKind::kUnnamed;
            row.name = "instruction " + std::to_string(e.instruction);
          }
          if (row.op_type.empty()) row.op_type = index.instruction_op(static_cast<size_t>(e.instruction));
        }
        row.durations_ns.push_back(e.duration_ns());
        event_rows[static_cast<size_t>(&e - run.profile_events.data())] = static_cast<int64_t>(builder.last);
        continue;
      }
      if (e.delegate_index < 0) continue;  // a delegate event outside any delegate call
      const auto d = static_cast<size_t>(e.delegate_index);
      inside[e.instruction].push_back(&e);
      const std::vector<int32_t>* handles = index.delegate_handles(d, e.name, e.delegate_debug_id);
      const std::string identifier =
          e.name.empty() ? "#" + std::to_string(e.delegate_debug_id) : "'" + e.name + "'";
      InspectorRow& row =
          builder.row(handles == nullptr ? "u" + std::to_string(d) + ":" + identifier
                                         : "d" + std::to_string(d) + ":" + handles_key(*handles),
                      created);
      if (created) {
        row.placement = index.backend_id(d);
        row.delegate_index = e.delegate_index;
        if (handles != nullptr) name_row(index, *handles, row);
        if (handles == nullptr) {
          row.kind = RowKind::kUnknownIdentifier;
          row.name = "unknown identifier " + identifier + " of delegate " + std::to_string(d);
        } else if (row.name.empty()) {
          row.kind = RowKind::kUnnamed;
          row.name = "identifier " + identifier + " of delegate " + std::to_string(d) + " (no ONNX node)";
        }
      }
      if (row.kind == RowKind::kNode) attributed[e.instruction].push_back(&e);
      row.durations_ns.push_back(e.duration_ns());
      event_rows[static_cast<size_t>(&e - run.profile_events.data())] = static_cast<int64_t>(builder.last);
      if (row.columns.empty() && !e.metadata.empty()) {
        const MetadataParser parser = options.delegate_metadata_parser ? options.delegate_metadata_parser
                                                                       : metadata_parser_for(row.placement);
        const MetadataContext context{row.placement,
                                      [&index, d](int64_t id) { return index.describe(d, id); }};
        row.columns = parser(e.metadata.data(), e.metadata.size(), context);
      }
    }
    // Each delegate call: what its events cover, and the rest as overhead.
    for (const ProfileEvent& e : run.profile_events) {
      if (e.in_delegate || e.delegate_index < 0) continue;
      DelegateSummary& del = summary_.delegates[static_cast<size_t>(e.delegate_index)];
      const uint64_t covered = outer_time(inside[e.instruction]);
      const uint64_t named = outer_time(attributed[e.instruction]);
      del.events_ns += covered;
      del.attributed_ns += named;
      del.events += inside[e.instruction].size();
      summary_.attributed_delegate_ns += std::min(named, e.duration_ns());
      bool created = false;
      InspectorRow& row = builder.row("o" + std::to_string(e.delegate_index), created);
      if (created) {
        row.kind = RowKind::kDelegateOverhead;
        row.placement = del.backend_id;
        row.delegate_index = e.delegate_index;
        row.name = "delegate " + std::to_string(e.delegate_index) + " (" + del.backend_id + ") overhead";
      }
      row.durations_ns.push_back(e.duration_ns() > covered ? e.duration_ns() - covered : 0);
    }
  }
}

const InspectorRow* Inspector::row_of(size_t run, size_t event) const {
  if (run >= event_rows_.size() || event >= event_rows_[run].size() || event_rows_[run][event] < 0)
    return nullptr;
  return &rows_[static_cast<size_t>(event_rows_[run][event])];
}

std::vector<const InspectorRow*> Inspector::sorted(SortBy by) const {
  std::vector<const InspectorRow*> out;
  for (const InspectorRow& r : rows_) out.push_back(&r);
  if (by == SortBy::kTime)
    std::stable_sort(out.begin(), out.end(), [](const InspectorRow* a, const InspectorRow* b) {
      return a->total_ns() > b->total_ns();
    });
  return out;
}

}  // namespace etc::devtools
