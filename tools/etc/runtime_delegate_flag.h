#pragma once
// --runtime-delegate NAME (etc run, etc info): a load-time delegate applied
// when the program is loaded (runtime/delegate/delegate.h), and a report of
// which kernel ranges it took.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/delegate/delegate.h"
#include "runtime/executor/method.h"

namespace etc::cli {

// Null for "" or "none"; throws ToolError naming the known delegates otherwise.
std::unique_ptr<Delegate> make_runtime_delegate(const std::string& name);

// {"name", "used", "not_used_because"?, "ranges": [{"kernels": [from, end),
// "instructions": [first, last]}], "left": [{"kernels", "reason"}]}
nlohmann::json describe_runtime_delegate(const Method& method, const Delegate& delegate);

// "load-time delegate xnnpack: 3 kernel ranges (instructions 0..12, ...)"
std::string runtime_delegate_line(const nlohmann::json& report);

}  // namespace etc::cli
