#include "compiler/devtools/metadata_parsers.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/onednn/onednn_blob.h"
#include "runtime/backends/xnnpack/profiling_metadata.h"
#include "runtime/backends/xnnpack/xnnpack_blob.h"

namespace etc::devtools {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, MetadataParser, std::less<>>& registry() {
  static std::map<std::string, MetadataParser, std::less<>> parsers;
  return parsers;
}

MetadataColumns unreadable(size_t size, const char* what) {
  return {{"metadata", std::to_string(size) + " bytes, not " + what}};
}

// runtime/backends/onednn/compiled_partition.h: "key=value;key=value"
// (the primitive's implementation, the reorders it needed, the copies of
// an in-place concatenation), printable ASCII.
MetadataColumns onednn_metadata(const uint8_t* data, size_t size, const MetadataContext&) {
  if (size == 0) return {};
  if (data == nullptr || size > 256) return unreadable(size, "oneDNN metadata");
  for (size_t i = 0; i < size; ++i)
    if (data[i] < 0x20 || data[i] > 0x7e) return unreadable(size, "oneDNN metadata");
  const std::string text(reinterpret_cast<const char*>(data), size);
  MetadataColumns columns;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return unreadable(size, "oneDNN metadata");
    columns.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    start = end + 1;
  }
  return columns;
}

// demo_format.h: the instruction's element count, little-endian uint64.
MetadataColumns demo_metadata(const uint8_t* data, size_t size, const MetadataContext&) {
  if (size == 0) return {};
  if (data == nullptr || size != demo::kDemoMetadataBytes) return unreadable(size, "demo metadata");
  uint64_t elements = 0;
  for (size_t b = 0; b < size; ++b) elements |= static_cast<uint64_t>(data[b]) << (8 * b);
  return {{"elements", std::to_string(elements)}};
}

// runtime/backends/xnnpack/profiling_metadata.h.
MetadataColumns xnnpack_metadata(const uint8_t* data, size_t size, const MetadataContext& context) {
  if (size == 0) return {};
  const auto m = xnnpack::decode_stage_metadata(data, size);
  if (!m) return unreadable(size, "XNNPACK stage metadata version 1");
  const auto type = static_cast<xnnpack::fb::NodeType>(m->node_type);
  const bool known = type >= xnnpack::fb::NodeType::MIN && type <= xnnpack::fb::NodeType::MAX;
  const char* runs_on = m->runs_on == xnnpack::StageRunsOn::kNative        ? "native"
                        : m->runs_on == xnnpack::StageRunsOn::kWinograd    ? "native-winograd"
                        : m->runs_on == xnnpack::StageRunsOn::kWinograd2x2 ? "native-winograd-2x2"
                                                                           : "xnnpack";
  MetadataColumns columns = {{"runs_on", runs_on},
                             {"xnn_node", known ? xnnpack::fb::EnumNameNodeType(type)
                                                : "node type " + std::to_string(m->node_type)}};
  if (m->num_nodes != 1) columns.emplace_back("xnn_nodes", std::to_string(m->num_nodes));
  if (!m->folded_ids.empty()) {
    std::string folded;
    for (int32_t id : m->folded_ids) {
      std::string described = context.describe_id ? context.describe_id(id) : std::string();
      if (described.empty()) described = "#" + std::to_string(id);
      folded += (folded.empty() ? "" : ", ") + described;
    }
    columns.emplace_back("folded", folded);
  }
  return columns;
}

}  // namespace

MetadataColumns hex_metadata(const uint8_t* data, size_t size, const MetadataContext&) {
  if (size == 0 || data == nullptr) return {};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[data[i] >> 4];
    hex += kDigits[data[i] & 0xf];
  }
  return {{"metadata", hex}};
}

void register_metadata_parser(std::string_view backend_id, MetadataParser parser) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[std::string(backend_id)] = std::move(parser);
}

MetadataParser metadata_parser_for(std::string_view backend_id) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const auto it = registry().find(backend_id);
  return it != registry().end() && it->second ? it->second : MetadataParser(hex_metadata);
}

void register_builtin_metadata_parsers() {
  register_metadata_parser(demo::kDemoBackendId, demo_metadata);
  register_metadata_parser(xnnpack::kXnnpackBackendId, xnnpack_metadata);
  register_metadata_parser(onednn::kOnednnBackendId, onednn_metadata);
}

}  // namespace etc::devtools
