// etc run MODEL.etp [--input NAME=FILE]... [--output-dir DIR] [--threads N] [--iterations N] [--json]
//                   [--etdump FILE [--profile] [--debug-outputs]] [--feedback OUT=IN]... [--chunks
//                   NAME=FILE]...
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/devtools/etdump_writer.h"
#include "runtime/devtools/event_recorder.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tools/etc/atomic_file.h"
#include "tools/etc/commands.h"
#include "tools/etc/input_flags.h"
#include "tools/etc/runtime_delegate_flag.h"
#include "tools/etc/stream_flags.h"
#include "tools/etc/tensor_io.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

std::string file_safe(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out.empty() ? "output" : out;
}

// One .npy file name per output: its name made file-safe, and made unique
// ("a_b~2") where two names come out the same ("a b" and "a/b"), so no
// output overwrites another.
std::vector<std::string> output_file_names(const Method& m) {
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const std::string base = file_safe(m.output_name(i));
    std::string name = base;
    for (int k = 2; !taken.insert(name).second; ++k) name = base + "~" + std::to_string(k);
    names.push_back(name + ".npy");
  }
  return names;
}

// The recording of `etc run --etdump`: an EventRecorder over buffers sized
// from the flags. The data buffer is reserved, not touched, so a large
// default costs address space only.
struct Recording {
  std::vector<RecordedEvent> events;
  std::unique_ptr<uint8_t[]> data;
  std::unique_ptr<EventRecorder> recorder;

  Recording(size_t num_events, size_t data_bytes) : events(num_events), data(new uint8_t[data_bytes]) {
    recorder =
        std::make_unique<EventRecorder>(Span<RecordedEvent>(events), Span<uint8_t>(data.get(), data_bytes));
  }
};

void write_etdump_file(const std::string& path, const Recording& rec, const Program& program) {
  EtdumpHeader header{std::string("etc ") + ETC_VERSION_STRING,
                      std::filesystem::path(program.name()).filename().string(), program.fingerprint()};
  Result<std::vector<uint8_t>> bytes = write_etdump(*rec.recorder, header);
  if (!bytes.ok()) throw ToolError(path + ": " + bytes.message());
  write_file_atomically(path, bytes.get());
}

}  // namespace

Action add_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a program file on portable kernels and delegates");
  struct Options {
    std::string program, output_dir;
    std::vector<std::string> inputs, feedback, chunks;
    int iterations = 1;
    int warmup = 0;
    int threads = 0;
    int64_t max_loop_iterations = 0;
    bool json = false;
    bool random_inputs = false;
    std::string etdump;
    bool profile = false;
    bool debug_outputs = false;
    bool verify = false;
    size_t etdump_events = 0;
    size_t etdump_buffer_mb = 0;
    std::string runtime_delegate;
    std::vector<std::string> disabled_backends;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("program", opt->program, "Program file (.etp)")->required();
  cmd->add_option("--input", opt->inputs, "NAME=FILE with FILE .npy or ONNX TensorProto .pb (repeatable)");
  cmd->add_option("--output-dir", opt->output_dir, "Write each output as DIR/<name>.npy");
  cmd->add_option("--max-loop-iterations", opt->max_loop_iterations,
                  "Fail a run when one Loop runs more iterations than this (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option(
         "--threads", opt->threads,
         "Threads of the pool delegates and threaded kernels share (0: one per CPU this process may run on)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--iterations", opt->iterations, "Run N times and report latency")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", opt->warmup, "Untimed runs before the timed ones")
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--random-inputs", opt->random_inputs, "Fill inputs not given with random data (seeded)");
  cmd->add_option("--feedback", opt->feedback,
                  "OUT=IN: after every run, output OUT becomes input IN (a recurrent state; repeatable)");
  cmd->add_option("--chunks", opt->chunks,
                  "NAME=FILE: FILE stacks N inputs for NAME on a new first axis; run k reads chunk k mod N "
                  "(warm-up runs count; repeatable). --output-dir then writes every timed run's outputs, "
                  "stacked on a new first axis");
  cmd->add_option(
      "--disable-backend", opt->disabled_backends,
      "Treat this backend as unavailable: its delegates run their portable fallback (repeatable)");
  cmd->add_flag("--json", opt->json, "Print a JSON summary");
  cmd->add_option(
      "--runtime-delegate", opt->runtime_delegate,
      "Hand the portable kernels a load-time delegate takes to it: xnnpack, or none (the default)");
  cmd->add_flag("--verify", opt->verify,
                "Before running, check every segment (constants, delegate blobs) against its checksum");
  auto* etdump = cmd->add_option("--etdump", opt->etdump,
                                 "Record every timed run (instruction and delegate events) into FILE, an "
                                 "ETDump for `etc inspect`");
  auto* profile = cmd->add_flag("--profile", opt->profile,
                                "Delegates report each of their nodes (XNNPACK: every node its own stage)")
                      ->needs(etdump);
  // Two levels of delegate detail: one run records one of them.
  cmd->add_flag("--debug-outputs", opt->debug_outputs,
                "Also record every instruction's and every delegate node's output (not with --profile)")
      ->needs(etdump)
      ->excludes(profile);
  cmd->add_option("--etdump-events", opt->etdump_events,
                  "Capacity of the event buffer (default: sized from the program and --iterations)")
      ->needs(etdump)
      ->check(CLI::Range(size_t{1}, size_t{1} << 26));
  cmd->add_option("--etdump-buffer-mb", opt->etdump_buffer_mb,
                  "MiB for names, metadata and outputs (default: 64, or 2048 with --debug-outputs)")
      ->needs(etdump)
      ->check(CLI::Range(size_t{1}, size_t{1} << 16));
  return [opt]() {
    // Before anything is loaded: TensorProto inputs need etc-compiler.
    if (!io::reads_tensor_proto())
      for (const auto* flags : {&opt->inputs, &opt->chunks})
        for (const std::string& flag : *flags)
          if (io::is_tensor_proto_path(flag.substr(flag.find('=') + 1))) throw NeedsCompiler{};
    // What the runtime's own start-up steps take (the process's exec and
    // library loading come before and are not counted).
    const auto ms_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    const auto load_start = std::chrono::steady_clock::now();
    auto program = Program::load(opt->program);
    if (!program.ok()) throw ToolError(program.message());
    if (opt->verify)
      if (Status s = program->verify_segment_checksums(); !s.ok()) throw ToolError(s.message());
    const double load_ms = ms_since(load_start);
    RuntimeOptions options;
    options.num_threads = usable_threads(opt->threads);
    options.max_loop_iterations = opt->max_loop_iterations;
    if (opt->profile) options.delegate_detail = DelegateDetail::kPerNode;
    if (opt->debug_outputs) options.delegate_detail = DelegateDetail::kNodeOutputs;
    std::unique_ptr<Recording> recording;
    if (!opt->etdump.empty()) {
      const size_t per_run = program->plan().instructions() ? program->plan().instructions()->size() : 0;
      const size_t events =
          opt->etdump_events > 0
              ? opt->etdump_events
              : std::min<size_t>((4 * per_run + 4096) * static_cast<size_t>(opt->iterations),
                                 size_t{1} << 22);
      const size_t mb = opt->etdump_buffer_mb > 0 ? opt->etdump_buffer_mb : opt->debug_outputs ? 2048 : 64;
      recording = std::make_unique<Recording>(events, mb << 20);
      recording->recorder->set_intermediate_outputs(opt->debug_outputs);
    }
    const std::unique_ptr<Delegate> delegate = make_runtime_delegate(opt->runtime_delegate);
    options.delegate = delegate.get();
    options.disabled_backends = opt->disabled_backends;
    const auto init_start = std::chrono::steady_clock::now();
    auto method = Method::init(program.get(), 0, options, recording ? recording->recorder.get() : nullptr);
    if (!method.ok()) throw ToolError(method.message());
    const double init_ms = ms_since(init_start);
    Method& m = *method.get();

    std::vector<ProgramInput> specs;
    for (size_t i = 0; i < m.num_inputs(); ++i) specs.push_back({m.input_name(i), m.input_spec(i)});
    const Stream stream(opt->feedback, opt->chunks, m, opt->program);
    // The method copies each input into its own memory: the loaded ones are
    // released before the first run, not held beside it.
    {
      const std::vector<LoadedInput> inputs =
          load_inputs(opt->inputs, specs, opt->random_inputs, opt->program, stream.chunked_inputs(),
                      [&](size_t i) { return m.mutable_input_data(i); });
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].source.empty() || inputs[i].filled) continue;
        // An input compiled with a range of sizes runs at the file's shape.
        if (inputs[i].tensor.spec.dtype == m.input_spec(i).dtype &&
            !(inputs[i].tensor.spec.shape == m.input_spec(i).shape) &&
            !(m.input_min_shape(i) == m.input_max_shape(i)))
          if (Status s = m.resize_input(i, inputs[i].tensor.spec.shape); !s.ok())
            throw ToolError(opt->program + ": " + inputs[i].source + ": " + s.message());
        if (Status s = m.set_input(i, inputs[i].tensor.spec, inputs[i].tensor.bytes.data()); !s.ok())
          throw ToolError(opt->program + ": " + inputs[i].source + ": " + s.message());
      }
    }

    // One run: the stream's inputs before, the timed execute, its feedback after.
    int64_t run = 0;
    double first_run_ms = 0;  // the first execute, warm-up or timed
    auto run_once = [&]() {
      if (Status s = stream.before_run(m, run++); !s.ok()) throw ToolError(opt->program + ": " + s.message());
      const auto t0 = std::chrono::steady_clock::now();
      Status s = m.execute();
      const auto t1 = std::chrono::steady_clock::now();
      if (!s.ok()) throw ToolError(opt->program + ": execution failed: " + s.message());
      if (Status f = stream.after_run(m); !f.ok()) throw ToolError(opt->program + ": " + f.message());
      const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      if (run == 1) first_run_ms = ms;
      return ms;
    };
    for (int it = 0; it < opt->warmup; ++it) run_once();
    if (recording) recording->recorder->reset();  // warm-up runs are not recorded
    // With --chunks, every timed run's outputs are kept: chunks in, chunks out.
    const bool stacked = stream.chunked() && !opt->output_dir.empty();
    std::vector<std::vector<uint8_t>> runs(stacked ? m.num_outputs() : 0);
    std::vector<double> times;
    for (int it = 0; it < opt->iterations; ++it) {
      times.push_back(run_once());
      for (size_t i = 0; i < runs.size(); ++i) {
        const auto* p = static_cast<const uint8_t*>(m.output(i).data);
        runs[i].insert(runs[i].end(), p, p + m.output(i).nbytes());
      }
    }
    nlohmann::json recorded;
    if (recording) {
      write_etdump_file(opt->etdump, *recording, program.get());
      const EventRecorder& r = *recording->recorder;
      recorded = {{"file", opt->etdump},
                  {"runs", r.num_runs()},
                  {"events", r.num_events()},
                  {"dropped_events", r.dropped_events()},
                  {"dropped_bytes", r.dropped_bytes()},
                  {"rejected_events", r.rejected_events()}};
    }
    nlohmann::json outputs = nlohmann::json::array();
    if (!opt->output_dir.empty()) std::filesystem::create_directories(opt->output_dir);
    const std::vector<std::string> files = output_file_names(m);
    for (size_t i = 0; i < m.num_outputs(); ++i) {
      const Tensor& t = m.output(i);
      nlohmann::json o = {{"name", m.output_name(i)},
                          {"dtype", dtype_name(t.dtype())},
                          {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())}};
      if (!opt->output_dir.empty()) {
        const std::string path = (std::filesystem::path(opt->output_dir) / files[i]).string();
        if (stacked) {
          TensorSpec all{t.spec.dtype, Shape{opt->iterations}};
          for (int64_t d : t.spec.shape) all.shape.push_back(d);
          if (t.spec.shape.rank() >= kMaxRank)
            throw ToolError(opt->program + ": output '" + m.output_name(i) + "' has rank " +
                            std::to_string(t.spec.shape.rank()) +
                            ": its runs cannot be stacked (rank above 8)");
          io::write_npy(path, all, runs[i].data());
          o["shape"] = std::vector<int64_t>(all.shape.begin(), all.shape.end());
        } else {
          io::write_npy(path, t.spec, t.data);
        }
        o["file"] = path;
      }
      outputs.push_back(o);
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.size() % 2
                              ? sorted[sorted.size() / 2]
                              : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    // The activations the delegates hold of their own, beside the arena:
    // their total, unless a backend does not say.
    nlohmann::json delegate_activations = nlohmann::json::array();
    size_t delegate_activation_bytes = 0;
    bool delegate_activations_known = true;
    for (const auto& d : m.delegate_activations()) {
      delegate_activations.push_back(
          {{"backend", std::string(d.backend)},
           {"activation_bytes", d.bytes ? nlohmann::json(*d.bytes) : nlohmann::json()}});
      delegate_activation_bytes += d.bytes.value_or(0);
      delegate_activations_known = delegate_activations_known && d.bytes.has_value();
    }
    if (opt->json) {
      nlohmann::json j = {
          {"program", opt->program},
          {"iterations", opt->iterations},
          {"latency_ms", {{"median", median}, {"min", sorted.front()}, {"max", sorted.back()}}},
          {"startup_ms", {{"load", load_ms}, {"init", init_ms}, {"first_run", first_run_ms}}},
          {"arena_bytes", m.arena_bytes()},
          {"delegate_activation_bytes",
           delegate_activations_known ? nlohmann::json(delegate_activation_bytes) : nlohmann::json()},
          {"delegate_activations", delegate_activations},
          {"outputs", outputs}};
      if (!stream.empty()) j["stream"] = stream.describe();
      if (recording) j["etdump"] = recorded;
      if (delegate) j["runtime_delegate"] = describe_runtime_delegate(m, *delegate);
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (const auto& o : outputs)
        std::cout << "output " << o["name"].get<std::string>() << ": " << o["dtype"].get<std::string>()
                  << o["shape"].dump()
                  << (o.contains("file") ? " -> " + o["file"].get<std::string>() : std::string()) << "\n";
      if (!stream.empty()) std::cout << "stream: " << stream.describe() << "\n";
      if (delegate) std::cout << runtime_delegate_line(describe_runtime_delegate(m, *delegate)) << "\n";
      std::cout << "latency: median " << median << " ms, min " << sorted.front() << " ms, max "
                << sorted.back() << " ms over " << opt->iterations << " iteration(s)\n";
      std::cout << "startup: load " << load_ms << " ms, init " << init_ms << " ms, first run " << first_run_ms
                << " ms\n";
      std::cout << "memory: arena " << m.arena_bytes() << " bytes";
      if (!delegate_activations.empty()) {
        std::cout << ", delegates' activations ";
        if (delegate_activations_known)
          std::cout << delegate_activation_bytes << " bytes";
        else
          std::cout << "unknown (a backend does not say)";
      }
      std::cout << "\n";
      if (recording) {
        const EventRecorder& r = *recording->recorder;
        std::cout << "etdump: " << opt->etdump << " (" << r.num_runs() << " run(s), " << r.num_events()
                  << " events)";
        if (r.dropped_events() + r.dropped_bytes() + r.rejected_events() > 0)
          std::cout << "; dropped " << r.dropped_events() << " events and " << r.dropped_bytes()
                    << " bytes (raise --etdump-events / --etdump-buffer-mb), rejected "
                    << r.rejected_events();
        std::cout << "; `etc inspect " << opt->program << " --etdump " << opt->etdump << "` shows it\n";
      }
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
