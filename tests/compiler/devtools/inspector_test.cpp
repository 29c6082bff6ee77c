// The Inspector (compiler/devtools/inspector.h) on a known program and a
// hand-made ETDump: rows per ONNX node through instruction debug handles and
// the delegate's map (int and string identifiers), unknown identifiers kept
// apart, the delegate's overhead, the summary figures, metadata parsers,
// and every output format.
#include "compiler/devtools/inspector.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/common/compile_error.h"
#include "compiler/devtools/inspect_formats.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

using devtools::Etdump;
using devtools::Inspector;
using devtools::InspectorRow;
using devtools::ProfileEvent;
using devtools::RowKind;

// relu (handle 1) → delegate 0 "acme" (handles 2, 3, 4) → neg (handle 5).
// The delegate's map: int 10 → {2, 3}, string "add_x" → {4}.
std::vector<uint8_t> known_program() {
  testing::ProgramBytes p;
  const int x = p.input("x", {4});
  const int a = p.activation("a", {4});
  const int b = p.activation("b", {4});
  const int y = p.output("y", {4});
  p.debug_handle(1, "r", "Relu");
  p.debug_handle(2, "conv", "Conv");
  p.debug_handle(3, "bn", "BatchNormalization");
  p.debug_handle(4, "add", "Add");
  p.debug_handle(5, "n\xff", "Neg");  // not UTF-8: the JSON formats must cope
  p.call_kernel("relu", {x}, {a}, {1});
  const int d = p.delegate("acme", "blob");
  p.delegate_map_entry(d, 10, "", {2, 3});
  p.delegate_map_entry(d, 0, "add_x", {4});
  p.call_delegate(d, {a}, {b}, {2, 3, 4});
  p.call_kernel("neg", {b}, {y}, {5});
  return p.build();
}

ProfileEvent instruction(int32_t i, int32_t delegate, uint64_t start, uint64_t end) {
  ProfileEvent e;
  e.instruction = i;
  e.delegate_index = delegate;
  e.start_ns = start;
  e.end_ns = end;
  return e;
}

ProfileEvent in_delegate(std::string name, int64_t id, uint64_t start, uint64_t end,
                         std::vector<uint8_t> meta = {}) {
  ProfileEvent e = instruction(1, 0, start, end);
  e.in_delegate = true;
  e.name = std::move(name);
  e.delegate_debug_id = id;
  e.metadata = std::move(meta);
  return e;
}

// Two runs; run r (0, 1) takes r * 100 ns longer in the conv entry.
Etdump known_dump(const Program& program) {
  Etdump dump;
  dump.program_fingerprint = program.fingerprint();
  dump.program_name = program.name();
  for (uint64_t r = 0; r < 2; ++r) {
    devtools::EtdumpRun run;
    const uint64_t extra = 100 * r;
    run.profile_events.push_back(instruction(0, -1, 0, 100));
    run.profile_events.push_back(instruction(1, 0, 100, 1100 + extra));
    run.profile_events.push_back(in_delegate("", 10, 120, 720 + extra, {0xab, 0x01}));
    run.profile_events.push_back(in_delegate("add_x", -1, 720 + extra, 1020 + extra));
    run.profile_events.push_back(in_delegate("", 99, 1020 + extra, 1070 + extra));
    run.profile_events.push_back(instruction(2, -1, 1100 + extra, 1300 + extra));
    run.duration_ns = 1300 + extra;
    dump.runs.push_back(run);
  }
  return dump;
}

const InspectorRow& row_named(const Inspector& inspector, const std::string& name) {
  for (const InspectorRow& row : inspector.rows())
    if (row.name == name) return row;
  FAIL("no row named " << name);
  return inspector.rows().front();
}

struct Loaded {
  std::vector<uint8_t> bytes = known_program();
  Program program = std::move(testing::load_program_bytes(bytes, "known.etp")).get();
};

TEST_CASE("the inspector gives one row per ONNX node, portable and inside a delegate", "[inspector]") {
  Loaded l;
  const Etdump dump = known_dump(l.program);
  const Inspector inspector(l.program, dump);
  REQUIRE(inspector.rows().size() == 6);

  const InspectorRow& relu = row_named(inspector, "r");
  CHECK(relu.placement == "portable");
  CHECK(relu.op_type == "Relu");
  CHECK(relu.durations_ns == std::vector<uint64_t>{100, 100});

  const InspectorRow& fused = row_named(inspector, "conv + bn");
  CHECK(fused.kind == RowKind::kNode);
  CHECK(fused.op_type == "Conv + BatchNormalization");
  CHECK(fused.onnx_nodes == std::vector<std::string>{"conv", "bn"});
  CHECK(fused.placement == "acme");
  CHECK(fused.delegate_index == 0);
  CHECK(fused.durations_ns == std::vector<uint64_t>{600, 700});
  CHECK(fused.mean_ns() == 650.0);
  CHECK(fused.min_ns() == 600);
  CHECK(fused.max_ns() == 700);
  // No parser for "acme": the bytes as hex.
  CHECK(fused.columns == devtools::MetadataColumns{{"metadata", "ab01"}});

  CHECK(row_named(inspector, "add").durations_ns == std::vector<uint64_t>{300, 300});

  const InspectorRow& unknown = row_named(inspector, "unknown identifier #99 of delegate 0");
  CHECK(unknown.kind == RowKind::kUnknownIdentifier);
  CHECK(unknown.onnx_nodes.empty());
  CHECK(unknown.durations_ns == std::vector<uint64_t>{50, 50});

  const InspectorRow& overhead = row_named(inspector, "delegate 0 (acme) overhead");
  CHECK(overhead.kind == RowKind::kDelegateOverhead);
  CHECK(overhead.durations_ns == std::vector<uint64_t>{50, 50});  // 1000 - 950, 1100 - 1050

  const devtools::InspectorSummary& s = inspector.summary();
  CHECK(s.runs == 2);
  CHECK(s.total_ns == 100 + 1000 + 200 + 100 + 1100 + 200);
  CHECK(s.portable_ns == 600);
  CHECK(s.delegate_ns == 2100);
  CHECK(s.attributed_delegate_ns == 900 + 1000);  // the unknown identifier is not attributed
  CHECK(s.attributed_share() == Approx(1900.0 / 2100.0));
  CHECK(s.events_gap() == Approx(100.0 / 2100.0));
  REQUIRE(s.delegates.size() == 1);
  CHECK(s.delegates[0].events == 6);

  const auto by_time = inspector.sorted(devtools::SortBy::kTime);
  CHECK(by_time.front()->name == "conv + bn");
  const auto by_order = inspector.sorted(devtools::SortBy::kOrder);
  CHECK(by_order.front()->name == "r");
}

TEST_CASE("the inspector refuses an ETDump of another program or naming what the program lacks",
          "[inspector]") {
  Loaded l;
  Etdump dump = known_dump(l.program);
  dump.program_fingerprint ^= 1;
  CHECK_THROWS_WITH(Inspector(l.program, dump), Catch::Contains("recorded from program"));
  dump = known_dump(l.program);
  dump.runs[0].profile_events[0].instruction = 7;
  CHECK_THROWS_WITH(Inspector(l.program, dump), Catch::Contains("names instruction 7, the program has 3"));
  dump = known_dump(l.program);
  dump.runs[0].profile_events[2].delegate_index = 3;
  CHECK_THROWS_WITH(Inspector(l.program, dump), Catch::Contains("names delegate 3, the program has 1"));
}

TEST_CASE("metadata parsers: the registry per backend, or one given to the inspector", "[inspector]") {
  Loaded l;
  const Etdump dump = known_dump(l.program);
  devtools::register_metadata_parser(
      "acme", [](const uint8_t* data, size_t size, const devtools::MetadataContext& c) {
        // Asks for the ONNX nodes behind another identifier, as XNNPACK's does for folded nodes.
        return devtools::MetadataColumns{{"first", std::to_string(size > 0 ? data[0] : 0)},
                                         {"other", c.describe_id(10)}};
      });
  {
    const Inspector inspector(l.program, dump);
    CHECK(row_named(inspector, "conv + bn").columns ==
          devtools::MetadataColumns{{"first", "171"}, {"other", "'conv + bn' (Conv + BatchNormalization)"}});
    // Events without metadata get no columns.
    CHECK(row_named(inspector, "add").columns.empty());
  }
  devtools::InspectorOptions options;
  options.delegate_metadata_parser = [](const uint8_t*, size_t size, const devtools::MetadataContext& c) {
    return devtools::MetadataColumns{{"bytes", std::to_string(size)}, {"backend", c.backend_id}};
  };
  const Inspector inspector(l.program, dump, options);
  CHECK(row_named(inspector, "conv + bn").columns ==
        devtools::MetadataColumns{{"bytes", "2"}, {"backend", "acme"}});
  devtools::register_metadata_parser("acme", nullptr);
  CHECK(Inspector(l.program, dump).rows().size() == 6);
}

TEST_CASE("the built-in metadata parsers read their backends' bytes and survive any others", "[inspector]") {
  devtools::register_builtin_metadata_parsers();
  const devtools::MetadataContext context{"demo", [](int64_t) { return std::string(); }};
  const std::vector<uint8_t> demo = {0x10, 0x27, 0, 0, 0, 0, 0, 0};
  CHECK(devtools::metadata_parser_for("demo")(demo.data(), demo.size(), context) ==
        devtools::MetadataColumns{{"elements", "10000"}});
  CHECK(devtools::metadata_parser_for("demo")(demo.data(), 3, context).front().second.find("not demo") !=
        std::string::npos);
  // XNNPACK stage metadata: where the stage ran comes first.
  for (const auto& [runs_on, name] : std::vector<std::pair<uint8_t, std::string>>{
           {0, "xnnpack"}, {1, "native"}, {2, "native-winograd"}, {3, "native-winograd-2x2"}}) {
    const std::vector<uint8_t> stage = {1, runs_on, 0, 0, 1, 0, 0, 0};
    const devtools::MetadataColumns columns =
        devtools::metadata_parser_for("xnnpack")(stage.data(), stage.size(), context);
    REQUIRE_FALSE(columns.empty());
    CHECK(columns.front() == std::pair<std::string, std::string>{"runs_on", name});
  }
  const std::vector<uint8_t> junk = {1, 9, 9, 9, 9, 9, 9, 9, 9};
  CHECK(devtools::metadata_parser_for("xnnpack")(junk.data(), junk.size(), context).front().first ==
        "metadata");
  CHECK(devtools::metadata_parser_for("no such backend")(junk.data(), 2, context) ==
        devtools::MetadataColumns{{"metadata", "0109"}});
}

TEST_CASE("inspect formats: a table, valid JSON, TSV and a nested chrome trace", "[inspector]") {
  Loaded l;
  const Etdump dump = known_dump(l.program);
  const Inspector inspector(l.program, dump);

  const std::string table =
      devtools::format_inspection(inspector, devtools::InspectFormat::kTable, devtools::SortBy::kTime);
  CHECK(table.find("conv + bn") != std::string::npos);
  CHECK(table.find("delegate 0 (acme) overhead") != std::string::npos);
  CHECK(table.find("delegate time attributed to ONNX nodes: 90.5%") != std::string::npos);

  const auto json = nlohmann::json::parse(
      devtools::format_inspection(inspector, devtools::InspectFormat::kJson, devtools::SortBy::kOrder));
  REQUIRE(json["rows"].size() == 6);
  CHECK(json["rows"][0]["name"] == "r");
  CHECK(json["rows"][0]["calls"] == 2);
  CHECK(json["summary"]["attributed_share"].get<double>() == Approx(1900.0 / 2100.0));

  const std::string tsv =
      devtools::format_inspection(inspector, devtools::InspectFormat::kTsv, devtools::SortBy::kOrder);
  CHECK(std::count(tsv.begin(), tsv.end(), '\n') == 7);
  CHECK(tsv.rfind("name\top_type\tplacement", 0) == 0);

  const auto trace = nlohmann::json::parse(
      devtools::format_inspection(inspector, devtools::InspectFormat::kChromeTrace, devtools::SortBy::kTime));
  const auto& events = trace["traceEvents"];
  std::vector<const nlohmann::json*> calls, inside;
  for (const auto& e : events) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    if (e["ph"] != "X") continue;
    REQUIRE(e["ts"].is_number());
    REQUIRE(e["dur"].is_number());
    if (e["cat"] == "delegate call") calls.push_back(&e);
    if (e["cat"] == "acme") inside.push_back(&e);
  }
  REQUIRE(calls.size() == 2);
  REQUIRE(inside.size() == 6);
  for (const nlohmann::json* e : inside) {
    const bool nested = std::any_of(calls.begin(), calls.end(), [&](const nlohmann::json* c) {
      return (*e)["ts"].get<double>() >= (*c)["ts"].get<double>() &&
             (*e)["ts"].get<double>() + (*e)["dur"].get<double>() <=
                 (*c)["ts"].get<double>() + (*c)["dur"].get<double>() + 1e-9;
    });
    CHECK(nested);
  }
}

}  // namespace
}  // namespace etc
