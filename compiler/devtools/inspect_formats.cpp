#include "compiler/devtools/inspect_formats.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace etc::devtools {
namespace {

using nlohmann::json;

double us(double ns) { return ns / 1000.0; }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string percent(double share) { return fixed(100.0 * share, 1) + "%"; }

double share_of(const InspectorRow& row, const InspectorSummary& s) {
  return s.total_ns == 0 ? 0.0 : static_cast<double>(row.total_ns()) / static_cast<double>(s.total_ns);
}

const char* kind_name(RowKind kind) {
  switch (kind) {
    case RowKind::kNode: return "node";
    case RowKind::kDelegateOverhead: return "delegate overhead";
    case RowKind::kControl: return "control flow";
    case RowKind::kUnknownIdentifier: return "unknown identifier";
    case RowKind::kUnnamed: return "no ONNX node";
  }
  return "node";
}

std::string details(const InspectorRow& row) {
  std::string out;
  for (const auto& [key, value] : row.columns) out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

// Cut to `width` characters (bytes of ASCII; a multi-byte name may come out
// a little narrower), marking the cut.
std::string fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t cut = width - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;  // not inside a UTF-8 sequence
  return text.substr(0, cut) + "...";
}

// A fused row's name when it does not fit: its first node and how many
// more ("/layer1/layer1.0/conv1/Conv (+1)"); the op column lists them all.
std::string short_name(const InspectorRow& row, size_t width) {
  if (row.name.size() <= width || row.onnx_nodes.size() < 2) return fit(row.name, width);
  const std::string more = " (+" + std::to_string(row.onnx_nodes.size() - 1) + ")";
  return fit(row.onnx_nodes.front(), width > more.size() + 4 ? width - more.size() : 4) + more;
}

std::string pad(const std::string& text, size_t width, bool right = false) {
  if (text.size() >= width) return text;
  return right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
}

std::string summary_lines(const Inspector& inspector) {
  const InspectorSummary& s = inspector.summary();
  const double runs = static_cast<double>(std::max<size_t>(s.runs, 1));
  std::ostringstream out;
  out << "per run: " << fixed(us(static_cast<double>(s.total_ns) / runs) / 1000.0, 3) << " ms (portable "
      << fixed(us(static_cast<double>(s.portable_ns) / runs) / 1000.0, 3) << " ms, delegates "
      << fixed(us(static_cast<double>(s.delegate_ns) / runs) / 1000.0, 3) << " ms), " << s.runs
      << " run(s)\n";
  for (const DelegateSummary& d : s.delegates) {
    if (d.total_ns == 0) continue;
    const double total = static_cast<double>(d.total_ns);
    out << "delegate " << d.delegate_index << " (" << d.backend_id
        << "): " << fixed(us(total / runs) / 1000.0, 3) << " ms per run, " << d.events
        << " event(s); events cover " << percent(static_cast<double>(d.events_ns) / total)
        << ", named ONNX nodes " << percent(static_cast<double>(d.attributed_ns) / total) << "\n";
  }
  if (s.delegate_ns > 0)
    out << "delegate time attributed to ONNX nodes: " << percent(s.attributed_share())
        << "; delegate events sum to within " << percent(s.events_gap()) << " of the delegate calls\n";
  if (s.dropped_events + s.dropped_bytes + s.rejected_events > 0)
    out << "warning: the recording dropped " << s.dropped_events << " event(s) and " << s.dropped_bytes
        << " byte(s) and rejected " << s.rejected_events << " event(s); figures are incomplete\n";
  return out.str();
}

std::string table(const Inspector& inspector, SortBy sort) {
  const InspectorSummary& s = inspector.summary();
  std::ostringstream out;
  out << pad("#", 4, true) << "  " << pad("ONNX node(s)", 48) << "  " << pad("op", 20) << "  "
      << pad("runs on", 9) << pad("calls", 7, true) << pad("mean us", 11, true) << pad("p50 us", 11, true)
      << pad("min us", 11, true) << pad("max us", 11, true) << pad("share", 8, true) << "  details\n";
  size_t i = 0;
  for (const InspectorRow* row : inspector.sorted(sort)) {
    out << pad(std::to_string(++i), 4, true) << "  " << pad(short_name(*row, 48), 48) << "  "
        << pad(fit(row->op_type, 20), 20) << "  " << pad(row->placement, 9)
        << pad(std::to_string(row->durations_ns.size()), 7, true)
        << pad(fixed(us(row->mean_ns()), 1), 11, true)
        << pad(fixed(us(static_cast<double>(row->p50_ns())), 1), 11, true)
        << pad(fixed(us(static_cast<double>(row->min_ns())), 1), 11, true)
        << pad(fixed(us(static_cast<double>(row->max_ns())), 1), 11, true)
        << pad(percent(share_of(*row, s)), 8, true) << "  " << details(*row) << "\n";
  }
  out << "\n" << summary_lines(inspector);
  return out.str();
}

json row_json(const InspectorRow& row, const InspectorSummary& s) {
  json metadata = json::object();
  for (const auto& [key, value] : row.columns) metadata[key] = value;
  return json{{"name", row.name},
              {"op_type", row.op_type},
              {"onnx_nodes", row.onnx_nodes},
              {"kind", kind_name(row.kind)},
              {"placement", row.placement},
              {"delegate_index", row.delegate_index},
              {"calls", row.durations_ns.size()},
              {"total_us", us(static_cast<double>(row.total_ns()))},
              {"mean_us", us(row.mean_ns())},
              {"p50_us", us(static_cast<double>(row.p50_ns()))},
              {"min_us", us(static_cast<double>(row.min_ns()))},
              {"max_us", us(static_cast<double>(row.max_ns()))},
              {"share", share_of(row, s)},
              {"metadata", metadata}};
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

std::string json_report(const Inspector& inspector, SortBy sort) {
  const InspectorSummary& s = inspector.summary();
  json rows = json::array();
  for (const InspectorRow* row : inspector.sorted(sort)) rows.push_back(row_json(*row, s));
  json delegates = json::array();
  for (const DelegateSummary& d : s.delegates)
    delegates.push_back({{"delegate_index", d.delegate_index},
                         {"backend_id", d.backend_id},
                         {"total_us", us(static_cast<double>(d.total_ns))},
                         {"events_us", us(static_cast<double>(d.events_ns))},
                         {"attributed_us", us(static_cast<double>(d.attributed_ns))},
                         {"events", d.events}});
  return dump({{"program", inspector.program().name()},
               {"producer", inspector.etdump().producer},
               {"runs", s.runs},
               {"summary",
                {{"total_us", us(static_cast<double>(s.total_ns))},
                 {"portable_us", us(static_cast<double>(s.portable_ns))},
                 {"delegate_us", us(static_cast<double>(s.delegate_ns))},
                 {"attributed_delegate_us", us(static_cast<double>(s.attributed_delegate_ns))},
                 {"attributed_share", s.attributed_share()},
                 {"delegate_events_gap", s.events_gap()},
                 {"dropped_events", s.dropped_events},
                 {"dropped_bytes", s.dropped_bytes},
                 {"rejected_events", s.rejected_events}}},
               {"delegates", delegates},
               {"rows", rows}});
}

std::string tsv_field(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return text;
}

std::string tsv(const Inspector& inspector, SortBy sort) {
  const InspectorSummary& s = inspector.summary();
  std::ostringstream out;
  out << "name\top_type\tplacement\tkind\tcalls\ttotal_us\tmean_us\tp50_us\tmin_us\tmax_us\tshare\tdetails\n";
  for (const InspectorRow* row : inspector.sorted(sort))
    out << tsv_field(row->name) << "\t" << tsv_field(row->op_type) << "\t" << tsv_field(row->placement)
        << "\t" << kind_name(row->kind) << "\t" << row->durations_ns.size() << "\t"
        << fixed(us(static_cast<double>(row->total_ns())), 3) << "\t" << fixed(us(row->mean_ns()), 3) << "\t"
        << fixed(us(static_cast<double>(row->p50_ns())), 3) << "\t"
        << fixed(us(static_cast<double>(row->min_ns())), 3) << "\t"
        << fixed(us(static_cast<double>(row->max_ns())), 3) << "\t" << fixed(share_of(*row, s), 6) << "\t"
        << tsv_field(details(*row)) << "\n";
  return out.str();
}

std::string chrome_trace(const Inspector& inspector) {
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", "etc: " + inspector.program().name()}}}});
  events.push_back(
      {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "execute"}}}});
  double offset_us = 0;
  const auto& runs = inspector.etdump().runs;
  for (size_t r = 0; r < runs.size(); ++r) {
    const EtdumpRun& run = runs[r];
    uint64_t run_end = run.duration_ns;
    for (const ProfileEvent& e : run.profile_events) run_end = std::max(run_end, e.end_ns);
    events.push_back({{"name", "run " + std::to_string(r + 1)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", offset_us},
                      {"dur", us(static_cast<double>(run_end))}});
    for (size_t i = 0; i < run.profile_events.size(); ++i) {
      const ProfileEvent& e = run.profile_events[i];
      const InspectorRow* row = inspector.row_of(r, i);
      if (row == nullptr && (e.in_delegate || e.delegate_index < 0))
        continue;  // no instruction or delegate to show
      json args = {{"instruction", e.instruction}};
      std::string name;
      std::string category = "portable";
      if (row == nullptr) {
        const std::string backend =
            inspector.summary().delegates.at(static_cast<size_t>(e.delegate_index)).backend_id;
        name = "delegate " + std::to_string(e.delegate_index) + " (" + backend + ")";
        category = "delegate call";
        args["delegate_index"] = e.delegate_index;
      } else {
        name = row->name;
        category = e.in_delegate ? row->placement : "portable";
        args["op_type"] = row->op_type;
        args["placement"] = row->placement;
        if (e.in_delegate) {
          args["delegate_index"] = e.delegate_index;
          args["identifier"] = e.name.empty() ? json(e.delegate_debug_id) : json(e.name);
        }
        for (const auto& [key, value] : row->columns) args[key] = value;
      }
      events.push_back({{"name", name},
                        {"cat", category},
                        {"ph", "X"},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", offset_us + us(static_cast<double>(e.start_ns))},
                        {"dur", us(static_cast<double>(e.duration_ns()))},
                        {"args", args}});
    }
    // Runs back to back with a gap of a tenth of a run, so each stands apart.
    offset_us += us(static_cast<double>(run_end)) * 1.1 + 1.0;
  }
  return dump({{"traceEvents", events}, {"displayTimeUnit", "ms"}});
}

}  // namespace

bool parse_inspect_format(const std::string& text, InspectFormat& format) {
  if (text == "table")
    format = InspectFormat::kTable;
  else if (text == "json")
    format = InspectFormat::kJson;
  else if (text == "tsv")
    format = InspectFormat::kTsv;
  else if (text == "chrome-trace")
    format = InspectFormat::kChromeTrace;
  else
    return false;
  return true;
}

std::string format_inspection(const Inspector& inspector, InspectFormat format, SortBy sort) {
  switch (format) {
    case InspectFormat::kTable: return table(inspector, sort);
    case InspectFormat::kJson: return json_report(inspector, sort);
    case InspectFormat::kTsv: return tsv(inspector, sort);
    case InspectFormat::kChromeTrace: return chrome_trace(inspector);
  }
  return {};
}

}  // namespace etc::devtools
