#pragma once
// A program's debug info indexed once for the developer tools: the ONNX node
// behind each debug handle, each instruction's handles, and each delegate's
// debug handle map by identifier (exact match; integer and string maps
// apart). Used by the Inspector and by numeric debugging.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/devtools/etdump_reader.h"
#include "runtime/executor/program.h"

namespace etc::devtools {

struct OnnxNode {
  std::string name, op_type;
};

// The named nodes among some handles, in handle order, and their names and
// op types joined with " + " ("conv + relu", "Conv + Relu").
struct NamedNodes {
  std::vector<std::string> names;
  std::string joined_names, joined_op_types;
};

class ProgramDebugInfo {
 public:
  explicit ProgramDebugInfo(const Program& program);

  // A delegate a load-time delegate made when the program was loaded, as
  // an ETDump recorded it: numbered after the program's own (and after the
  // load-time ones added before); false when `delegate_index` is not next.
  bool add_load_time_delegate(const LoadTimeDelegate& delegate);

  size_t num_delegates() const { return delegates_.size(); }
  const std::string& backend_id(size_t d) const { return delegates_[d].backend_id; }
  // The sorted handles of delegate `d`'s map entry with this identifier (a
  // string when `name` is not empty, else `id`); null when there is none or
  // no delegate `d`.
  const std::vector<int32_t>* delegate_handles(size_t d, const std::string& name, int64_t id) const;
  // Instruction `i` (which must exist): its sorted handles, its operator
  // name ("delegate call" for a delegate call).
  std::vector<int32_t> instruction_handles(size_t i) const;
  std::string instruction_op(size_t i) const;
  // An If or a Loop: its event spans the events of the chains it runs.
  bool instruction_is_control(size_t i) const;

  // Null for a handle without an ONNX node name.
  const OnnxNode* node(int32_t handle) const;
  NamedNodes name(const std::vector<int32_t>& handles) const;
  // "'conv + relu' (Conv + Relu)" for delegate `d`'s integer identifier `id`;
  // empty when the map has no such entry or it names no node.
  std::string describe(size_t d, int64_t id) const;

 private:
  struct Delegate {
    std::string backend_id;
    std::map<int64_t, std::vector<int32_t>> by_id;
    std::map<std::string, std::vector<int32_t>> by_name;
  };
  const Program& program_;
  std::map<int32_t, OnnxNode> nodes_;
  std::vector<Delegate> delegates_;
};

}  // namespace etc::devtools
