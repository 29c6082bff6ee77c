#pragma once
// What `etc inspect` prints from an Inspector (inspector.h):
//   table         one row per ONNX node (or fused set), then a summary
//   json          rows, summary and per-delegate figures, for scripts
//   tsv           the rows alone, one header line, tab-separated
//   chrome-trace  trace-event JSON for Perfetto / chrome://tracing: per
//                 run, each instruction as a complete ("X") event with the
//                 delegate's own events nested inside its delegate call
// Times are microseconds. Text that is not valid UTF-8 is replaced, so the
// JSON formats are always valid.

#include <string>

#include "compiler/devtools/inspector.h"

namespace etc::devtools {

enum class InspectFormat { kTable, kJson, kTsv, kChromeTrace };

// "table", "json", "tsv", "chrome-trace"; false for anything else.
bool parse_inspect_format(const std::string& text, InspectFormat& format);

std::string format_inspection(const Inspector& inspector, InspectFormat format, SortBy sort);

}  // namespace etc::devtools
