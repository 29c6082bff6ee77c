#include "tools/etc/input_flags.h"

#include <cstdint>
#include <cstring>
#include <thread>

#include "runtime/core/log.h"
#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

// SplitMix64 (Steele, Lea and Flood, 2014): seeded, and cheap enough that
// filling a large input (a 640x640 image) is a small part of a cold start
// (std::mt19937 through uniform_real_distribution took ~7 ms there).
class RandomBits {
 public:
  explicit RandomBits(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// `data` (spec.nbytes()): floats uniform in [0, 1); other dtypes zero.
void fill_random(const TensorSpec& spec, uint8_t* data, RandomBits& rng) {
  const auto n = static_cast<size_t>(spec.shape.numel());
  constexpr float kUnit = 1.0f / 16777216.0f;  // 24 random bits per float
  if (spec.dtype == DType::Float32) {
    auto* f = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < n; i += 2) {
      const uint64_t bits = rng.next();
      f[i] = static_cast<float>(bits >> 40) * kUnit;
      if (i + 1 < n) f[i + 1] = static_cast<float>((bits >> 8) & 0xFFFFFF) * kUnit;
    }
  } else if (spec.dtype == DType::Float64) {
    auto* d = reinterpret_cast<double*>(data);
    for (size_t i = 0; i < n; ++i) d[i] = static_cast<double>(rng.next() >> 40) * kUnit;
  } else if (spec.nbytes() > 0) {
    std::memset(data, 0, spec.nbytes());
  }
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
                                     const std::string& program_name, const std::set<std::string>& supplied,
                                     const std::function<void*(size_t)>& random_into) {
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
  RandomBits rng(42);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (given[i] || supplied.count(inputs[i].name)) continue;
    if (!random_fill)
      throw ToolError(program_name + ": input '" + inputs[i].name + "' (" + dtype_name(inputs[i].spec.dtype) +
                      inputs[i].spec.shape.str() + ") not given; pass --input " + inputs[i].name +
                      "=FILE or --random-inputs");
    if (void* into = random_into ? random_into(i) : nullptr; into != nullptr) {
      fill_random(inputs[i].spec, static_cast<uint8_t*>(into), rng);
      out[i] = LoadedInput{io::OwnedTensor{inputs[i].spec, {}}, "random data", true};
      continue;
    }
    io::OwnedTensor t{inputs[i].spec, std::vector<uint8_t>(inputs[i].spec.nbytes())};
    fill_random(t.spec, t.bytes.data(), rng);
    out[i] = LoadedInput{std::move(t), "random data"};
  }
  return out;
}

int usable_threads(int requested) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores <= 0 || requested <= cores) return requested;
  log_message(LogLevel::Warning, "--threads %d: this machine has %d cores; using %d", requested, cores,
              cores);
  return cores;
}

}  // namespace etc::cli
