#include "tools/etc/input_flags.h"

#include <spdlog/spdlog.h>

#include <random>
#include <thread>

#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

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

std::string describe_inputs(const std::vector<ProgramInput>& inputs) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i)
    s += std::string(i ? ", " : "") + inputs[i].name + ": " + dtype_name(inputs[i].spec.dtype) +
         inputs[i].spec.shape.str();
  return s;
}

}  // namespace

std::vector<LoadedInput> load_inputs(const std::vector<std::string>& flags,
                                     const std::vector<ProgramInput>& inputs, bool random_fill,
                                     const std::string& program_name, const std::set<std::string>& supplied) {
  std::vector<LoadedInput> out(inputs.size());
  std::vector<bool> given(inputs.size(), false);
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos) throw ToolError("--input '" + flag + "': expected NAME=FILE");
    const std::string name = flag.substr(0, eq);
    size_t index = inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].name == name) index = i;
    if (supplied.count(name)) throw ToolError("--input '" + name + "': the input is also given by --chunks");
    if (index == inputs.size())
      throw ToolError("--input '" + name +
                      "': the program has no such input (inputs: " + describe_inputs(inputs) + ")");
    if (given[index]) throw ToolError("--input '" + name + "' is given twice");
    out[index] = LoadedInput{io::read_tensor_file(flag.substr(eq + 1)), flag.substr(eq + 1)};
    given[index] = true;
  }
  std::mt19937 rng(42);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (given[i] || supplied.count(inputs[i].name)) continue;
    if (!random_fill)
      throw ToolError(program_name + ": input '" + inputs[i].name + "' (" + dtype_name(inputs[i].spec.dtype) +
                      inputs[i].spec.shape.str() + ") not given; pass --input " + inputs[i].name +
                      "=FILE or --random-inputs");
    out[i] = LoadedInput{random_tensor(inputs[i].spec, rng), "random data"};
  }
  return out;
}

int usable_threads(int requested) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores <= 0 || requested <= cores) return requested;
  spdlog::warn("--threads {}: this machine has {} cores; using {}", requested, cores, cores);
  return cores;
}

}  // namespace etc::cli
