#pragma once
// BackendDetails: the ahead-of-time half of a backend. preprocess turns one
// partition (a self-contained ExportedProgram whose inputs are the values
// flowing in and whose outputs are the values flowing out) into the bytes the
// runtime half will init from, plus a debug handle map built with
// DelegateMappingBuilder.
//
// The partition program keeps the original nodes' debug handles and ONNX
// names; constants tagged into the partition are constants of its graph.
// Errors: throw CompileError naming the node and the reason.

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/compile_spec.h"
#include "compiler/ir/delegate_debug_map.h"
#include "compiler/ir/graph.h"

namespace etc {

struct PreprocessResult {
  std::vector<uint8_t> processed_bytes;
  DelegateDebugMap debug_handle_map;  // may be empty
  // Per layout the processed bytes hold weights in, what they hold (may be
  // empty: the compile summary then says nothing of them).
  std::vector<ir::WeightLayoutSummary> weights;
};

class BackendDetails {
 public:
  virtual ~BackendDetails() = default;
  virtual PreprocessResult preprocess(const ir::ExportedProgram& partition,
                                      std::span<const CompileSpec> compile_specs) const = 0;
  // Bounded dynamic shapes: whether the runtime half, given the processed
  // bytes of a partition compiled at the largest input sizes (`largest`),
  // resizes them (BackendInterface::resize) into `other`, the same
  // partition compiled at other sizes of the ranges. Empty when it does,
  // else the first difference. The default: the backend cannot resize.
  virtual std::string check_resize(std::span<const uint8_t> /*largest*/,
                                   std::span<const uint8_t> /*other*/) const {
    return "this backend cannot resize its delegates to new input sizes";
  }
};

// The AOT halves by backend id. Built-in ones are registered by
// register_builtin_preprocessors() (preprocessors/register.h).
// Throws CompileError when `backend_id` is empty or already registered, or
// `details` is null. Registered details live until the program exits.
void register_backend_details(const std::string& backend_id, std::unique_ptr<BackendDetails> details);
// nullptr when unknown.
const BackendDetails* find_backend_details(const std::string& backend_id);
std::vector<std::string> registered_backend_details();  // sorted

}  // namespace etc
