#include "compiler/devtools/inspector.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

#include "compiler/common/compile_error.h"

namespace etc::devtools {
namespace {

std::string hex64(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The program's debug info, indexed once.
class DebugIndex {
 public:
  explicit DebugIndex(const Program& program) : program_(program) {
    if (const auto* infos = program.fb().debug_handles())
      for (const fb::DebugHandleInfo* info : *infos)
        if (info->onnx_node_name() != nullptr)
          nodes_[info->handle()] = {info->onnx_node_name()->str(),
                                    info->onnx_op_type() ? info->onnx_op_type()->str() : std::string()};
    if (const auto* delegates = program.fb().delegates())
      for (const fb::Delegate* d : *delegates) {
        Delegate& out = delegates_.emplace_back();
        out.backend_id = d->backend_id()->str();
        if (d->debug_handle_map() == nullptr) continue;
        for (const fb::DelegateMapEntry* e : *d->debug_handle_map()) {
          std::vector<int32_t> handles;
          if (e->debug_handles() != nullptr)
            handles.assign(e->debug_handles()->begin(), e->debug_handles()->end());
          std::sort(handles.begin(), handles.end());
          if (e->string_id() != nullptr)
            out.by_name.emplace(e->string_id()->str(), std::move(handles));
          else
            out.by_id.emplace(e->int_id(), std::move(handles));
        }
      }
  }

  size_t num_delegates() const { return delegates_.size(); }
  const std::string& backend_id(size_t d) const { return delegates_[d].backend_id; }

  // Null when the delegate's map has no entry with this identifier.
  const std::vector<int32_t>* delegate_handles(size_t d, const std::string& name, int64_t id) const {
    const Delegate& del = delegates_[d];
    if (!name.empty()) {
      const auto it = del.by_name.find(name);
      return it == del.by_name.end() ? nullptr : &it->second;
    }
    const auto it = del.by_id.find(id);
    return it == del.by_id.end() ? nullptr : &it->second;
  }

  std::vector<int32_t> instruction_handles(size_t i) const {
    const auto* h = program_.plan().instructions()->Get(static_cast<uint32_t>(i))->debug_handles();
    std::vector<int32_t> out;
    if (h != nullptr) out.assign(h->begin(), h->end());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string instruction_op(size_t i) const {
    const fb::Instruction& ins = *program_.plan().instructions()->Get(static_cast<uint32_t>(i));
    if (const auto* call = ins.args_as_KernelCall()) {
      const auto* ops = program_.fb().operators();
      if (ops != nullptr && call->op() < ops->size()) return ops->Get(call->op())->str();
    }
    return "delegate call";
  }

  // Names and op types of the named handles, in handle order.
  void name(const std::vector<int32_t>& handles, InspectorRow& row) const {
    std::string ops;
    for (int32_t h : handles) {
      const auto it = nodes_.find(h);
      if (it == nodes_.end()) continue;
      row.onnx_nodes.push_back(it->second.first);
      row.name += (row.name.empty() ? "" : " + ") + it->second.first;
      if (!it->second.second.empty()) ops += (ops.empty() ? "" : " + ") + it->second.second;
    }
    row.op_type = ops;
  }

  std::string describe(size_t d, int64_t id) const {
    const std::vector<int32_t>* handles = delegate_handles(d, {}, id);
    if (handles == nullptr) return {};
    InspectorRow row;
    name(*handles, row);
    return row.name.empty() ? std::string()
                            : "'" + row.name + "'" + (row.op_type.empty() ? "" : " (" + row.op_type + ")");
  }

 private:
  struct Delegate {
    std::string backend_id;
    std::map<int64_t, std::vector<int32_t>> by_id;
    std::map<std::string, std::vector<int32_t>> by_name;
  };
  const Program& program_;
  std::map<int32_t, std::pair<std::string, std::string>> nodes_;
  std::vector<Delegate> delegates_;
};

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
  const DebugIndex index(program);
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
          index.name(handles, row);
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
        if (handles != nullptr) index.name(*handles, row);
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
