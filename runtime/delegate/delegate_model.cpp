#include <algorithm>
#include <string>

#include "runtime/delegate/delegate.h"

namespace etc {
namespace {

std::string str(size_t v) { return std::to_string(v); }

std::string kernels_str(size_t from, size_t end) {
  return end == from + 1 ? "kernel " + str(from) : "kernels " + str(from) + ".." + str(end - 1);
}

const char* kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kPortable: return "a portable kernel";
    case KernelKind::kDelegateCall: return "an ahead-of-time delegate's call";
    case KernelKind::kControlFlow: return "a control-flow instruction";
  }
  return "unknown";
}

template <typename T>
bool contains(const std::vector<T*>& v, const Tensor* t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

}  // namespace

Result<KernelRange> DelegateModel::range(size_t from, size_t end) const {
  if (from >= end || end > kernels_.size())
    return fail(Error::InvalidArgument, "the range ", str(from), "..", str(end), " is not within the ",
                str(kernels_.size()), " kernels");
  for (const ReplacedRange& r : replaced_)
    if (from < r.end && r.from < end)
      return fail(Error::InvalidArgument, kernels_str(from, end), " overlap ", kernels_str(r.from, r.end),
                  ", already replaced: the two would not run as contiguous ranges");
  for (size_t k = from; k < end; ++k)
    if (kernels_[k].kind != KernelKind::kPortable)
      return fail(Error::InvalidArgument, "kernel ", str(k), " (instruction ", str(kernels_[k].instruction),
                  ") is ", kind_name(kernels_[k].kind), "; only portable kernels can be replaced");
  KernelRange r;
  std::vector<const Tensor*> produced;
  for (size_t k = from; k < end; ++k) {
    for (const Tensor* t : kernels_[k].inputs)
      if (t->present() && !contains(produced, t) && !contains(r.inputs, t)) r.inputs.push_back(t);
    for (Tensor* t : kernels_[k].outputs) {
      produced.push_back(t);
      const auto use = last_use_.find(t);
      if (use != last_use_.end() && use->second >= end) r.outputs.push_back(t);
    }
  }
  return r;
}

Status DelegateModel::replace(size_t from, size_t end, std::unique_ptr<DelegateKernel> kernel) {
  if (!kernel) return fail(Error::InvalidArgument, "no kernel to replace ", kernels_str(from, end), " with");
  ETC_ASSIGN_OR_RETURN(const KernelRange need, range(from, end));
  // A program constant the kernel holds itself (copied at build) need not
  // be one of its inputs.
  std::vector<const Tensor*> constants;
  for (size_t k = from; k < end; ++k)
    for (size_t j = 0; j < kernels_[k].inputs.size(); ++j)
      if (kernels_[k].constant[j]) constants.push_back(kernels_[k].inputs[j]);
  for (const Tensor* t : need.inputs)
    if (!contains(kernel->inputs(), t) && !contains(constants, t))
      return fail(
          Error::InvalidArgument, "replacing ", kernels_str(from, end),
          " would break a data dependency: the range reads a value the kernel does not take as an input");
  for (const Tensor* t : need.outputs)
    if (!contains(kernel->outputs(), t))
      return fail(
          Error::InvalidArgument, "replacing ", kernels_str(from, end),
          " would break a data dependency: a value the range produces is read after it, and the kernel "
          "does not produce it");
  for (const Tensor* t : kernel->inputs())
    if (!contains(need.inputs, t))
      return fail(Error::InvalidArgument, "replacing ", kernels_str(from, end),
                  ": the kernel takes an input the range does not read from outside");
  for (const Tensor* t : kernel->outputs())
    if (!contains(need.outputs, t))
      return fail(Error::InvalidArgument, "replacing ", kernels_str(from, end),
                  ": the kernel writes a value that is not one of the range's outputs");
  replaced_.push_back(
      ReplacedRange{from, end, kernels_[from].instruction, kernels_[end - 1].instruction, std::move(kernel)});
  return Status::Ok();
}

}  // namespace etc
