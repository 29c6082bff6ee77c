// etc inspect PROGRAM.etp --etdump FILE [--format table|json|tsv|chrome-trace]
//             [--sort time|order] [-o FILE]
//   Joins an ETDump recorded by `etc run --etdump` with the program's debug
//   info and its delegates' debug handle maps (devtools/inspector.h): time
//   per ONNX node, portable or inside a delegate.
#include <iostream>
#include <memory>

#include "compiler/common/compile_error.h"
#include "compiler/devtools/inspect_formats.h"
#include "compiler/devtools/inspector.h"
#include "compiler/emit/program_writer.h"
#include "tools/etc/atomic_file.h"
#include "tools/etc/commands.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {

Action add_inspect(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("inspect", "Time per ONNX node from an ETDump recorded by `etc run --etdump`");
  struct Options {
    std::string program, etdump, format = "table", sort = "time", output;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("program", opt->program, "Program file (.etp) the ETDump was recorded from")->required();
  cmd->add_option("--etdump", opt->etdump, "ETDump file written by `etc run --etdump`")->required();
  cmd->add_option("--format", opt->format, "table (default), json, tsv or chrome-trace (Perfetto)")
      ->check(CLI::IsMember({"table", "json", "tsv", "chrome-trace"}));
  cmd->add_option("--sort", opt->sort, "Rows by total time (default) or in execution order")
      ->check(CLI::IsMember({"time", "order"}));
  cmd->add_option("-o,--output", opt->output, "Write to FILE (atomically) instead of standard output");
  return [opt]() {
    auto program = Program::load(opt->program);
    if (!program.ok()) throw ToolError(program.message());
    const devtools::Etdump etdump = devtools::read_etdump_file(opt->etdump);
    devtools::register_builtin_metadata_parsers();
    std::unique_ptr<devtools::Inspector> inspector;
    try {
      inspector = std::make_unique<devtools::Inspector>(program.get(), etdump);
    } catch (const CompileError& e) {
      throw ToolError(opt->etdump + ": " + e.what());
    }
    devtools::InspectFormat format = devtools::InspectFormat::kTable;
    devtools::parse_inspect_format(opt->format, format);
    const devtools::SortBy sort = opt->sort == "order" ? devtools::SortBy::kOrder : devtools::SortBy::kTime;
    const std::string text = devtools::format_inspection(*inspector, format, sort);
    if (opt->output.empty())
      std::cout << text;
    else
      write_file_atomically(opt->output, std::vector<uint8_t>(text.begin(), text.end()));
    return kExitOk;
  };
}

}  // namespace etc::cli
