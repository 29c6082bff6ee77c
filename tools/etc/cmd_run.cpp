// etc run MODEL.etp [--input NAME=FILE]... [--output-dir DIR] [--threads N] [--iterations N] [--json]
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "compiler/common/compile_error.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tools/etc/commands.h"
#include "tools/etc/tensor_io.h"

namespace etc::cli {
namespace {

std::string file_safe(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out.empty() ? "output" : out;
}

io::OwnedTensor random_tensor(const TensorSpec& spec, std::mt19937& rng) {
  io::OwnedTensor t{spec, std::vector<uint8_t>(spec.nbytes())};
  const int64_t n = spec.shape.numel();
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    switch (spec.dtype) {
      case DType::Float32: reinterpret_cast<float*>(t.bytes.data())[i] = uni(rng); break;
      case DType::Float64: reinterpret_cast<double*>(t.bytes.data())[i] = uni(rng); break;
      case DType::Int64: reinterpret_cast<int64_t*>(t.bytes.data())[i] = 0; break;
      case DType::Int32: reinterpret_cast<int32_t*>(t.bytes.data())[i] = 0; break;
      default: t.bytes[i * dtype_size(spec.dtype)] = 0; break;
    }
  }
  return t;
}

std::string describe_inputs(const Method& m) {
  std::string s;
  for (size_t i = 0; i < m.num_inputs(); ++i)
    s += std::string(i ? ", " : "") + m.input_name(i) + ": " + dtype_name(m.input_spec(i).dtype) +
         m.input_spec(i).shape.str();
  return s;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a program file on portable kernels and delegates");
  struct Options {
    std::string program, output_dir;
    std::vector<std::string> inputs;
    int iterations = 1;
    int warmup = 0;
    int threads = 0;
    bool json = false;
    bool random_inputs = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("program", opt->program, "Program file (.etp)")->required();
  cmd->add_option("--input", opt->inputs, "NAME=FILE with FILE .npy or ONNX TensorProto .pb (repeatable)");
  cmd->add_option("--output-dir", opt->output_dir, "Write each output as DIR/<name>.npy");
  cmd->add_option("--threads", opt->threads, "Threads per delegate's thread pool (0: one per core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--iterations", opt->iterations, "Run N times and report latency")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", opt->warmup, "Untimed runs before the timed ones")
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--random-inputs", opt->random_inputs, "Fill inputs not given with random data (seeded)");
  cmd->add_flag("--json", opt->json, "Print a JSON summary");
  return [opt]() {
    auto program = Program::load(opt->program);
    if (!program.ok()) throw CompileError(program.message());
    RuntimeOptions options;
    options.num_threads = opt->threads;
    auto method = Method::init(program.get(), 0, options);
    if (!method.ok()) throw CompileError(method.message());
    Method& m = *method.get();

    std::vector<bool> given(m.num_inputs(), false);
    for (const std::string& flag : opt->inputs) {
      const size_t eq = flag.find('=');
      if (eq == std::string::npos) throw CompileError("--input '" + flag + "': expected NAME=FILE");
      const std::string name = flag.substr(0, eq);
      size_t index = m.num_inputs();
      for (size_t i = 0; i < m.num_inputs(); ++i)
        if (m.input_name(i) == name) index = i;
      if (index == m.num_inputs())
        throw CompileError("--input '" + name +
                           "': the program has no such input (inputs: " + describe_inputs(m) + ")");
      const io::OwnedTensor t = io::read_tensor_file(flag.substr(eq + 1));
      Status s = m.set_input(index, t.spec, t.bytes.data());
      if (!s.ok()) throw CompileError(flag.substr(eq + 1) + ": " + s.message());
      given[index] = true;
    }
    std::mt19937 rng(42);
    for (size_t i = 0; i < m.num_inputs(); ++i) {
      if (given[i]) continue;
      if (!opt->random_inputs)
        throw CompileError(opt->program + ": input '" + m.input_name(i) + "' (" +
                           dtype_name(m.input_spec(i).dtype) + m.input_spec(i).shape.str() +
                           ") not given; pass --input " + m.input_name(i) + "=FILE or --random-inputs");
      const io::OwnedTensor t = random_tensor(m.input_spec(i), rng);
      if (Status s = m.set_input(i, t.spec, t.bytes.data()); !s.ok()) throw CompileError(s.message());
    }

    for (int it = 0; it < opt->warmup; ++it)
      if (Status s = m.execute(); !s.ok())
        throw CompileError(opt->program + ": execution failed: " + s.message());
    std::vector<double> times;
    for (int it = 0; it < opt->iterations; ++it) {
      const auto t0 = std::chrono::steady_clock::now();
      Status s = m.execute();
      const auto t1 = std::chrono::steady_clock::now();
      if (!s.ok()) throw CompileError(opt->program + ": execution failed: " + s.message());
      times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    nlohmann::json outputs = nlohmann::json::array();
    if (!opt->output_dir.empty()) std::filesystem::create_directories(opt->output_dir);
    for (size_t i = 0; i < m.num_outputs(); ++i) {
      const Tensor& t = m.output(i);
      nlohmann::json o = {{"name", m.output_name(i)},
                          {"dtype", dtype_name(t.dtype())},
                          {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())}};
      if (!opt->output_dir.empty()) {
        const std::string path =
            (std::filesystem::path(opt->output_dir) / (file_safe(m.output_name(i)) + ".npy")).string();
        io::write_npy(path, t.spec, t.data);
        o["file"] = path;
      }
      outputs.push_back(o);
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.size() % 2
                              ? sorted[sorted.size() / 2]
                              : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    if (opt->json) {
      nlohmann::json j = {
          {"program", opt->program},
          {"iterations", opt->iterations},
          {"latency_ms", {{"median", median}, {"min", sorted.front()}, {"max", sorted.back()}}},
          {"arena_bytes", m.arena_bytes()},
          {"outputs", outputs}};
      std::cout << j.dump(2) << "\n";
    } else {
      for (const auto& o : outputs)
        std::cout << "output " << o["name"].get<std::string>() << ": " << o["dtype"].get<std::string>()
                  << o["shape"].dump()
                  << (o.contains("file") ? " -> " + o["file"].get<std::string>() : std::string()) << "\n";
      std::cout << "latency: median " << median << " ms, min " << sorted.front() << " ms, max "
                << sorted.back() << " ms over " << opt->iterations << " iteration(s)\n";
    }
    return kExitOk;
  };
}

}  // namespace etc::cli
