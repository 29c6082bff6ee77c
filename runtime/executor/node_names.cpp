#include "runtime/executor/node_names.h"

#include <vector>

namespace etc {
namespace {

constexpr size_t kMaxNamed = 3;

const fb::DebugHandleInfo* find_handle(const Program& program, int32_t handle) {
  const auto* infos = program.fb().debug_handles();
  if (infos == nullptr) return nullptr;
  for (const fb::DebugHandleInfo* info : *infos)
    if (info->handle() == handle) return info;
  return nullptr;
}

}  // namespace

std::string describe_onnx_nodes(const Program& program, Span<const int32_t> debug_handles) {
  std::vector<std::string> named;
  for (int32_t h : debug_handles) {
    const fb::DebugHandleInfo* info = find_handle(program, h);
    if (info == nullptr || info->onnx_node_name() == nullptr) continue;
    std::string n = "'" + info->onnx_node_name()->str() + "'";
    if (info->onnx_op_type() != nullptr) n += " (" + info->onnx_op_type()->str() + ")";
    named.push_back(std::move(n));
  }
  if (named.empty()) return {};
  std::string out = named.size() == 1 ? "ONNX node " : "ONNX nodes ";
  for (size_t i = 0; i < named.size() && i < kMaxNamed; ++i) out += (i ? ", " : "") + named[i];
  if (named.size() > kMaxNamed) out += " and " + std::to_string(named.size() - kMaxNamed) + " more";
  return out;
}

Span<const int32_t> delegate_debug_handles(const Program& program, uint32_t delegate, std::string_view name,
                                           int64_t delegate_debug_id) {
  const auto* delegates = program.fb().delegates();
  if (delegates == nullptr || delegate >= delegates->size()) return {};
  const auto* map = delegates->Get(delegate)->debug_handle_map();
  if (map == nullptr) return {};
  for (const fb::DelegateMapEntry* entry : *map) {
    const bool match = name.empty()
                           ? entry->string_id() == nullptr && entry->int_id() == delegate_debug_id
                           : entry->string_id() != nullptr && entry->string_id()->string_view() == name;
    if (match && entry->debug_handles() != nullptr)
      return {entry->debug_handles()->data(), entry->debug_handles()->size()};
  }
  return {};
}

}  // namespace etc
