#include "compiler/devtools/program_debug_info.h"

#include <algorithm>

namespace etc::devtools {

ProgramDebugInfo::ProgramDebugInfo(const Program& program) : program_(program) {
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

bool ProgramDebugInfo::add_load_time_delegate(const LoadTimeDelegate& delegate) {
  if (delegate.delegate_index < 0 || static_cast<size_t>(delegate.delegate_index) != delegates_.size())
    return false;
  Delegate& out = delegates_.emplace_back();
  out.backend_id = delegate.backend_id;
  for (const LoadTimeDelegate::Entry& e : delegate.map) {
    std::vector<int32_t> handles = e.handles;
    std::sort(handles.begin(), handles.end());
    if (!e.name.empty())
      out.by_name.emplace(e.name, std::move(handles));
    else
      out.by_id.emplace(e.id, std::move(handles));
  }
  return true;
}

const std::vector<int32_t>* ProgramDebugInfo::delegate_handles(size_t d, const std::string& name,
                                                               int64_t id) const {
  if (d >= delegates_.size()) return nullptr;
  const Delegate& del = delegates_[d];
  if (!name.empty()) {
    const auto it = del.by_name.find(name);
    return it == del.by_name.end() ? nullptr : &it->second;
  }
  const auto it = del.by_id.find(id);
  return it == del.by_id.end() ? nullptr : &it->second;
}

std::vector<int32_t> ProgramDebugInfo::instruction_handles(size_t i) const {
  const auto* h = program_.plan().instructions()->Get(static_cast<uint32_t>(i))->debug_handles();
  std::vector<int32_t> out;
  if (h != nullptr) out.assign(h->begin(), h->end());
  std::sort(out.begin(), out.end());
  return out;
}

std::string ProgramDebugInfo::instruction_op(size_t i) const {
  const fb::Instruction& ins = *program_.plan().instructions()->Get(static_cast<uint32_t>(i));
  if (const auto* call = ins.args_as_KernelCall()) {
    const auto* ops = program_.fb().operators();
    if (ops != nullptr && call->op() < ops->size()) return ops->Get(call->op())->str();
  }
  if (ins.args_as_IfCall()) return "if";
  if (ins.args_as_LoopCall()) return "loop";
  return "delegate call";
}

bool ProgramDebugInfo::instruction_is_control(size_t i) const {
  const fb::Instruction& ins = *program_.plan().instructions()->Get(static_cast<uint32_t>(i));
  return ins.args_as_IfCall() != nullptr || ins.args_as_LoopCall() != nullptr;
}

const OnnxNode* ProgramDebugInfo::node(int32_t handle) const {
  const auto it = nodes_.find(handle);
  return it == nodes_.end() ? nullptr : &it->second;
}

NamedNodes ProgramDebugInfo::name(const std::vector<int32_t>& handles) const {
  NamedNodes out;
  for (int32_t h : handles) {
    const OnnxNode* n = node(h);
    if (n == nullptr) continue;
    out.names.push_back(n->name);
    out.joined_names += (out.joined_names.empty() ? "" : " + ") + n->name;
    if (!n->op_type.empty()) out.joined_op_types += (out.joined_op_types.empty() ? "" : " + ") + n->op_type;
  }
  return out;
}

std::string ProgramDebugInfo::describe(size_t d, int64_t id) const {
  const std::vector<int32_t>* handles = delegate_handles(d, {}, id);
  if (handles == nullptr) return {};
  const NamedNodes n = name(*handles);
  if (n.joined_names.empty()) return {};
  return "'" + n.joined_names + "'" + (n.joined_op_types.empty() ? "" : " (" + n.joined_op_types + ")");
}

}  // namespace etc::devtools
