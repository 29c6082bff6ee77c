#include "tools/etc/partition_format.h"

#include <array>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace etc::cli {
namespace {

constexpr int kPartitionJsonVersion = 1;

std::string percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.1f%%", share * 100.0);
  return buf;
}

// 1234567 → "1.23M"
std::string human(int64_t n) {
  char buf[32];
  const double d = static_cast<double>(n);
  if (n >= 1000000000)
    std::snprintf(buf, sizeof(buf), "%.2fG", d / 1e9);
  else if (n >= 1000000)
    std::snprintf(buf, sizeof(buf), "%.2fM", d / 1e6);
  else if (n >= 1000)
    std::snprintf(buf, sizeof(buf), "%.1fk", d / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(n));
  return buf;
}

std::string node_label(const NodeAssignment& a) {
  const std::string name = a.onnx_name.empty() ? a.edge_op + "_" + std::to_string(a.node) : a.onnx_name;
  return (a.scope.empty() ? "" : "[" + a.scope + "] ") + name + " (" +
         (a.onnx_op_type.empty() ? a.edge_op : a.onnx_op_type) + ")";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string format_partition_text(const PartitionReport& r) {
  std::ostringstream out;
  out << "model: " << r.model << "\nbackends: " << join(r.backends) << "\n\n";
  // Each column as wide as its widest cell, two spaces apart: no cell runs
  // into the next, however long a node name or partition tag.
  std::vector<std::array<std::string, 5>> rows = {{"node", "edge op", "placement", "flops", "reason"}};
  for (const NodeAssignment& a : r.nodes)
    rows.push_back({node_label(a), a.edge_op, a.tag.empty() ? "portable" : a.tag + " (" + a.backend + ")",
                    human(a.flops), a.reason});
  std::array<size_t, 5> width{};
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c + 1 < row.size(); ++c) line += pad(row[c], width[c] + 2);
    line += row.back();
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "\npartitions:\n";
  if (r.partitions.empty()) out << "  (none)\n";
  for (const PartitionSummary& p : r.partitions) {
    std::vector<std::string> names;
    for (ir::NodeId id : p.nodes)
      for (const NodeAssignment& a : r.nodes)
        if (a.node == id && a.scope == p.scope) names.push_back(node_label(a));
    out << "  " << p.tag << " (" << p.backend << "): " << p.nodes.size() << " node"
        << (p.nodes.size() == 1 ? "" : "s") << ", " << human(p.flops) << " FLOPs";
    if (p.constants_moved_in > 0)
      out << ", " << p.constants_moved_in << " constant" << (p.constants_moved_in == 1 ? "" : "s") << " ("
          << p.constant_bytes_moved_in << " bytes) moved in";
    out << "\n    nodes:   " << join(names) << "\n    inputs:  " << join(p.inputs)
        << "\n    outputs: " << join(p.outputs) << "\n";
  }
  out << "\nsummary: " << r.delegated_nodes << " of " << r.nodes.size() << " nodes delegated ("
      << percent(r.node_coverage()) << "), " << human(r.delegated_flops) << " of " << human(r.total_flops)
      << " FLOPs (" << percent(r.flops_coverage()) << "), " << r.partitions.size() << " partition"
      << (r.partitions.size() == 1 ? "" : "s") << "\n";
  return out.str();
}

std::string format_partition_json(const PartitionReport& r) {
  nlohmann::json j;
  j["schema_version"] = kPartitionJsonVersion;
  j["model"] = r.model;
  j["backends"] = r.backends;
  j["nodes"] = nlohmann::json::array();
  for (const NodeAssignment& a : r.nodes) {
    nlohmann::json n = {{"id", a.node},
                        {"scope", a.scope},
                        {"onnx_name", a.onnx_name},
                        {"onnx_op_type", a.onnx_op_type},
                        {"edge_op", a.edge_op},
                        {"flops", a.flops}};
    n["backend"] = a.backend.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.backend);
    n["partition"] = a.tag.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.tag);
    n["reason"] = a.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.reason);
    j["nodes"].push_back(std::move(n));
  }
  j["partitions"] = nlohmann::json::array();
  for (const PartitionSummary& p : r.partitions)
    j["partitions"].push_back({{"tag", p.tag},
                               {"scope", p.scope},
                               {"backend", p.backend},
                               {"nodes", p.nodes},
                               {"inputs", p.inputs},
                               {"outputs", p.outputs},
                               {"constants_moved_in", p.constants_moved_in},
                               {"constant_bytes_moved_in", p.constant_bytes_moved_in},
                               {"flops", p.flops}});
  j["summary"] = {{"nodes", r.nodes.size()},
                  {"delegated_nodes", r.delegated_nodes},
                  {"node_coverage", r.node_coverage()},
                  {"flops", r.total_flops},
                  {"delegated_flops", r.delegated_flops},
                  {"flops_coverage", r.flops_coverage()},
                  {"partitions", r.partitions.size()}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are
// not one (a stray continuation byte, an overlong or truncated sequence).
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) > 0x9f) || (c == 0xf0 && b(i + 1) < 0x90) ||
      (c == 0xf4 && b(i + 1) > 0x8f))
    return 0;  // overlong, surrogate or above U+10FFFF
  return n;
}

// A DOT double-quoted string body: quotes and backslashes escaped, control
// characters as \n or a space, and bytes that are not UTF-8 as U+FFFD (as
// the JSON formats do), so Graphviz always reads it.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char c = s[i];
    if (n == 1 && (c == '"' || c == '\\')) out += '\\';
    if (n == 1 && static_cast<unsigned char>(c) < 0x20)
      out += c == '\n' ? "\\n" : " ";
    else
      out.append(s, i, n);
    i += n;
  }
  return out;
}

constexpr const char* kClusterColours[] = {"#cfe8fc", "#d7f5d0", "#fde2c8", "#eadcf8", "#fbf3c3", "#f9d3dc"};

}  // namespace

std::string format_partition_dot(const PartitionReport& r, const ir::Graph& g) {
  std::ostringstream out;
  out << "digraph partitions {\n  rankdir=TB;\n  fontname=\"Helvetica\";\n  node [shape=box, "
         "style=\"rounded,filled\", fillcolor=white, "
         "fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";
  out << "  label=\"" << dot_escape(r.model) << ": " << percent(r.node_coverage()) << " of nodes delegated, "
      << r.partitions.size() << " partition" << (r.partitions.size() == 1 ? "" : "s") << "\";\n";
  std::map<ir::NodeId, const NodeAssignment*> by_id;
  // The main graph's nodes: control-flow bodies are graphs of their own.
  for (const NodeAssignment& a : r.nodes)
    if (a.scope.empty()) by_id[a.node] = &a;
  auto node_line = [&](const NodeAssignment& a, const char* indent) {
    out << indent << "n" << a.node << " [label=\""
        << dot_escape(a.onnx_name.empty() ? a.edge_op : a.onnx_name) << "\\n"
        << dot_escape(a.onnx_op_type.empty() ? a.edge_op : a.onnx_op_type) << "\"";
    if (!a.reason.empty()) out << ", tooltip=\"" << dot_escape(a.reason) << "\"";
    out << "];\n";
  };
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const PartitionSummary& p = r.partitions[i];
    if (!p.scope.empty()) continue;
    const char* colour = kClusterColours[i % std::size(kClusterColours)];
    out << "  subgraph cluster_" << i << " {\n    label=\"" << dot_escape(p.tag + " (" + p.backend + ")")
        << "\";\n    style=\"rounded,filled\";\n    color=\"" << colour << "\";\n    node [fillcolor=\""
        << colour << "\"];\n";
    for (ir::NodeId id : p.nodes) node_line(*by_id.at(id), "    ");
    out << "  }\n";
  }
  for (const NodeAssignment& a : r.nodes)
    if (a.tag.empty() && a.scope.empty()) node_line(a, "  ");
  for (ir::ValueId v : g.inputs())
    out << "  v" << v << " [shape=ellipse, label=\"" << dot_escape(g.value(v).name) << "\"];\n";
  for (ir::ValueId v : g.outputs())
    out << "  o" << v << " [shape=ellipse, label=\"" << dot_escape(g.value(v).name) << "\"];\n";
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    for (ir::ValueId v : n.inputs) {
      if (v == ir::kNoValue) continue;
      const ir::Value& value = g.value(v);
      if (value.producer >= 0)
        out << "  n" << value.producer << " -> n" << n.id << ";\n";
      else if (!value.is_constant())
        out << "  v" << v << " -> n" << n.id << ";\n";
    }
  }
  for (ir::ValueId v : g.outputs()) {
    const ir::Value& value = g.value(v);
    if (value.producer >= 0) out << "  n" << value.producer << " -> o" << v << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace etc::cli
