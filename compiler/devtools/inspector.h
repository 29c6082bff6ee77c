#pragma once
// Inspector: joins an ETDump's profiling events with the program that
// recorded it (ExecuTorch's Inspector), giving time per ONNX node.
//
// Joining, by exact identifier only:
// - an instruction's event belongs to the ONNX nodes of the instruction's
//   debug handles (placement "portable");
// - a delegate event belongs to the entry of its delegate's debug handle map
//   whose identifier it carries (string or integer), and so to that entry's
//   ONNX nodes (placement: the backend id). An identifier with no entry is a
//   row of its own ("unknown identifier"), never matched to anything else;
// - the part of a delegate call's time that no delegate event covers is that
//   delegate's "overhead" row (argument checks, layout conversion, the
//   executor's own work, and any stage the backend does not time).
// Rows are per distinct set of ONNX nodes (several when fused: "conv_1 +
// relu_1"), with every call of every run. Metadata bytes become columns
// through the delegate metadata parser (metadata_parsers.h).
//
// Errors: CompileError when the ETDump was recorded from another program
// (fingerprints differ) or names an instruction or delegate the program does
// not have.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/devtools/etdump_reader.h"
#include "compiler/devtools/metadata_parsers.h"
#include "runtime/executor/program.h"

namespace etc::devtools {

// kControl: an If or a Loop; its time includes the instructions of the
// chains it ran, which have rows of their own (not counted twice in totals).
enum class RowKind { kNode, kDelegateOverhead, kUnknownIdentifier, kUnnamed, kControl };

struct InspectorRow {
  RowKind kind = RowKind::kNode;
  std::string name;     // "conv_1 + relu_1", "delegate 0 (xnnpack) overhead", …
  std::string op_type;  // "Conv + Relu"; empty when unknown
  std::vector<std::string> onnx_nodes;
  std::string placement;  // "portable" or the backend id
  int32_t delegate_index = -1;
  size_t order = 0;                    // first appearance in the first run
  std::vector<uint64_t> durations_ns;  // every call, every run
  MetadataColumns columns;             // from the first call with metadata

  uint64_t total_ns() const;
  double mean_ns() const;
  uint64_t p50_ns() const;
  uint64_t min_ns() const;
  uint64_t max_ns() const;
};

struct DelegateSummary {
  int32_t delegate_index = -1;
  std::string backend_id;
  uint64_t total_ns = 0;       // the delegate calls' own events, all runs
  uint64_t events_ns = 0;      // covered by the backend's events
  uint64_t attributed_ns = 0;  // covered by events resolved to named ONNX nodes
  size_t events = 0;
};

struct InspectorSummary {
  size_t runs = 0;
  uint64_t total_ns = 0;  // every instruction of every run
  uint64_t portable_ns = 0;
  uint64_t delegate_ns = 0;
  uint64_t attributed_delegate_ns = 0;
  std::vector<DelegateSummary> delegates;
  uint64_t dropped_events = 0, dropped_bytes = 0, rejected_events = 0;

  // Share of delegate time attributed to named ONNX nodes (1 when there is
  // no delegate time).
  double attributed_share() const;
  // |Σ delegate events − Σ delegate calls| / Σ delegate calls.
  double events_gap() const;
};

struct InspectorOptions {
  // Used for every delegate when set; else the registry's parser for the
  // delegate's backend (metadata_parser_for).
  MetadataParser delegate_metadata_parser;
};

enum class SortBy { kTime, kOrder };

class Inspector {
 public:
  Inspector(const Program& program, const Etdump& etdump, InspectorOptions options = {});

  const std::vector<InspectorRow>& rows() const { return rows_; }
  const InspectorSummary& summary() const { return summary_; }
  const Program& program() const { return program_; }
  const Etdump& etdump() const { return etdump_; }
  // Rows by total time (largest first) or by first appearance.
  std::vector<const InspectorRow*> sorted(SortBy by) const;
  // The row event `event` of run `run` went to; null for a delegate call's
  // own event (its time is split between its events and its overhead row).
  const InspectorRow* row_of(size_t run, size_t event) const;

 private:
  const Program& program_;
  const Etdump& etdump_;
  std::vector<InspectorRow> rows_;
  std::vector<std::vector<int64_t>> event_rows_;  // per run, per profile event: index in rows_ or -1
  InspectorSummary summary_;
};

}  // namespace etc::devtools
