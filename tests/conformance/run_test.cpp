#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compiler/backend/to_backend.h"
#include "compiler/common/compile_error.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "compiler/import/onnx/tensor_proto.h"
#include "delegates/xnnpack/xnnpack_delegate.h"
#include "partitioners/composite/composite_partitioner.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/conformance/conformance.h"
#include "tools/etc/tensor_io.h"

namespace etc::conformance {
namespace fs = std::filesystem;
namespace {

const std::set<std::string>& scope() {
  static const std::set<std::string> ops = {"Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Pow",
                                            "Sqrt",
                                            "Exp",
                                            "Log",
                                            "Neg",
                                            "Abs",
                                            "Reciprocal",
                                            "Floor",
                                            "Ceil",
                                            "Round",
                                            "Sign",
                                            "Min",
                                            "Max",
                                            "Sum",
                                            "Mean",
                                            "Relu",
                                            "LeakyRelu",
                                            "PRelu",
                                            "Elu",
                                            "Selu",
                                            "Sigmoid",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "Tanh",
                                            "Erf",
                                            "Sin",
                                            "Cos",
                                            "Tan",
                                            "Asin",
                                            "Acos",
                                            "Atan",
                                            "Sinh",
                                            "Cosh",
                                            "Asinh",
                                            "Acosh",
                                            "Atanh",
                                            "Softplus",
                                            "Softsign",
                                            "Clip",
                                            "Softmax",
                                            "LogSoftmax",
                                            "Conv",
                                            "ConvTranspose",
                                            "Gemm",
                                            "MatMul",
                                            "MaxPool",
                                            "AveragePool",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "BatchNormalization",
                                            "InstanceNormalization",
                                            "LayerNormalization",
                                            "Reshape",
                                            "Flatten",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Transpose",
                                            "Concat",
                                            "Split",
                                            "Slice",
                                            "Gather",
                                            "Expand",
                                            "Tile",
                                            "Pad",
                                            "Resize",
                                            "Upsample",
                                            "GridSample",
                                            "DepthToSpace",
                                            "SpaceToDepth",
                                            "Shape",
                                            "Size",
                                            "Constant",
                                            "ConstantOfShape",
                                            "Range",
                                            "Identity",
                                            "Dropout",
                                            "Cast",
                                            "Where",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "LessOrEqual",
                                            "GreaterOrEqual",
                                            "Not",
                                            "And",
                                            "Or",
                                            "Xor",
                                            "ReduceMean",
                                            "ReduceSum",
                                            "ReduceMax",
                                            "ReduceMin",
                                            "ReduceProd",
                                            "ReduceL2",
                                            "ReduceSumSquare",
                                            "ArgMax",
                                            "ArgMin",
                                            "TopK",
                                            "CumSum",
                                            "Trilu",
                                            "Mod",
                                            "Einsum",
                                            "GatherElements",
                                            "GatherND",
                                            "Scatter",
                                            "ScatterElements",
                                            "ScatterND",
                                            "CastLike",
                                            "IsNaN",
                                            "IsInf",
                                            "ThresholdedRelu",
                                            "Shrink",
                                            "Celu",
                                            "LRN",
                                            "LpNormalization",
                                            "MeanVarianceNormalization",
                                            "EyeLike",
                                            "Hardmax",
                                            "OneHot",
                                            "ReduceL1",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "QuantizeLinear",
                                            "DequantizeLinear",
                                            "DynamicQuantizeLinear",
                                            "QLinearConv",
                                            "QLinearMatMul",
                                            "ConvInteger",
                                            "MatMulInteger",
                                            "LSTM",
                                            "GRU",
                                            "If",
                                            "Loop",
                                            "Scan"};
  return ops;
}

template <typename T>
bool compare_typed(const void* got, const void* want, int64_t n, const RunOptions& o, std::string& why) {
  const T* g = static_cast<const T*>(got);
  const T* w = static_cast<const T*>(want);
  for (int64_t i = 0; i < n; ++i) {
    const double gv = static_cast<double>(g[i]), wv = static_cast<double>(w[i]);
    if (std::isnan(gv) && std::isnan(wv)) continue;
    if (gv == wv) continue;
    if (std::fabs(gv - wv) <= o.atol + o.rtol * std::fabs(wv)) continue;
    std::ostringstream os;
    os << "element " << i << ": got " << gv << ", expected " << wv;
    why = os.str();
    return false;
  }
  return true;
}

bool compare(const Tensor& got, const io::OwnedTensor& want, const RunOptions& o, std::string& why) {
  if (got.dtype() != want.spec.dtype) {
    why = std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.spec.dtype);
    return false;
  }
  if (got.shape() != want.spec.shape) {
    why = "shape " + got.shape().str() + ", expected " + want.spec.shape.str();
    return false;
  }
  const int64_t n = got.numel();
  switch (got.dtype()) {
    case DType::Float32: return compare_typed<float>(got.data, want.bytes.data(), n, o, why);
    case DType::Float64: return compare_typed<double>(got.data, want.bytes.data(), n, o, why);
    case DType::Int64: return compare_typed<int64_t>(got.data, want.bytes.data(), n, o, why);
    case DType::Int32: return compare_typed<int32_t>(got.data, want.bytes.data(), n, o, why);
    case DType::Int8: return compare_typed<int8_t>(got.data, want.bytes.data(), n, o, why);
    default: return compare_typed<uint8_t>(got.data, want.bytes.data(), n, o, why);
  }
}

std::vector<std::string> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".pb") files.push_back(e.path().string());
  }
  // input_10 sorts after input_9.
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return files;
}

// Runs one mode of a compiled test: lower it (or not), load, run every data set.
TestResult run_mode(const ir::ExportedProgram& portable, const std::string& dir, const Mode& mode,
                    const RunOptions& options) {
  TestResult r;
  ir::ExportedProgram lowered;
  if (!mode.backends.empty()) {
    // Lowering must accept whatever the portable path compiles: a failure here is a defect.
    std::vector<std::unique_ptr<Partitioner>> partitioners;
    for (const std::string& b : mode.backends) partitioners.push_back(make_partitioner(b));
    try {
      lowered = to_backend(portable, CompositePartitioner(std::move(partitioners)));
    } catch (const CompileError& e) {
      r.reason = std::string("lowering: ") + e.what();
      return r;
    }
    r.delegates = static_cast<int>(lowered.delegates.size());
  }
  const std::vector<uint8_t> bytes = emit::serialize_program(mode.backends.empty() ? portable : lowered);
  auto loaded = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "model.etp");
  if (!loaded.ok()) {
    r.reason = "load: " + loaded.message();
    return r;
  }
  // A load-time delegate takes what it can of the portable program.
  std::unique_ptr<Delegate> delegate;
  if (mode.runtime_delegate == "xnnpack") delegate = std::make_unique<xnnpack::XnnpackDelegate>();
  RuntimeOptions runtime_options;
  runtime_options.delegate = delegate.get();
  auto method = Method::init(loaded.get(), 0, runtime_options);
  if (!method.ok()) {
    r.reason = "init: " + method.message();
    return r;
  }
  Method& m = *method.get();
  if (delegate) r.delegates = static_cast<int>(m.delegated_ranges().size());
  int sets = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || e.path().filename().string().rfind("test_data_set", 0) != 0) continue;
    ++sets;
    const auto inputs = sorted_files(e.path(), "input_");
    const auto outputs = sorted_files(e.path(), "output_");
    if (inputs.size() != m.num_inputs()) {
      r.reason = "data set has " + std::to_string(inputs.size()) + " inputs, program has " +
                 std::to_string(m.num_inputs());
      return r;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const io::OwnedTensor t = io::read_pb(inputs[i]);
      Status s = m.set_input(i, t.spec, t.bytes.data());
      if (!s.ok()) {
        r.reason = s.message();
        return r;
      }
    }
    Status s = m.execute();
    if (!s.ok()) {
      r.reason = "execute: " + s.message();
      return r;
    }
    if (outputs.size() != m.num_outputs()) {
      r.reason = "expected " + std::to_string(outputs.size()) + " outputs, program has " +
                 std::to_string(m.num_outputs());
      return r;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string why;
      if (!compare(m.output(i), io::read_pb(outputs[i]), options, why)) {
        r.reason = "output '" + m.output_name(i) + "' (" + e.path().filename().string() + "): " + why;
        return r;
      }
    }
  }
  if (sets == 0) {
    r.reason = "no test data sets";
    return r;
  }
  r.outcome = Outcome::Passed;
  return r;
}

// One mode's result as the child sends it: outcome, delegates and the
// reason's length on a line, then the reason.
std::string encode(const TestResult& r) {
  return std::to_string(static_cast<int>(r.outcome)) + " " + std::to_string(r.delegates) + " " +
         std::to_string(r.reason.size()) + "\n" + r.reason;
}

void write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    done += static_cast<size_t>(n);
  }
}

// Runs in the child process: compile once, then modes [first, end) in
// turn, each result written as soon as it is known.
void run_in_child(const std::string& dir, const RunOptions& options, size_t first, int fd) {
  ir::ExportedProgram portable;
  TestResult not_compiled;  // outcome Passed: it compiled
  not_compiled.outcome = Outcome::Passed;
  try {
    portable = compile_onnx((fs::path(dir) / "model.onnx").string());
  } catch (const CompileError& e) {
    not_compiled.outcome = Outcome::Rejected;
    not_compiled.reason = e.what();
  } catch (const std::exception& e) {
    // Anything but a CompileError from the compiler is a defect.
    not_compiled.outcome = Outcome::Failed;
    not_compiled.reason = e.what();
  }
  for (size_t i = first; i < options.modes.size(); ++i) {
    TestResult r;
    if (not_compiled.outcome != Outcome::Passed) {
      r = not_compiled;
    } else {
      try {
        r = run_mode(portable, dir, options.modes[i], options);
      } catch (const std::exception& e) {
        r.outcome = Outcome::Failed;
        r.reason = e.what();
      }
    }
    write_all(fd, encode(r));
  }
}

// Parses the records at the front of `msg` into results[next...], erasing
// them; a record cut short stays for the next read.
void take_records(std::string& msg, std::vector<TestResult>& results, size_t& next) {
  while (next < results.size()) {
    const size_t nl = msg.find('\n');
    if (nl == std::string::npos) return;
    std::istringstream head(msg.substr(0, nl));
    int outcome = 0, delegates = 0;
    size_t length = 0;
    if (!(head >> outcome >> delegates >> length) || msg.size() - nl - 1 < length) return;
    results[next].outcome = static_cast<Outcome>(outcome);
    results[next].delegates = delegates;
    results[next].reason = msg.substr(nl + 1, length);
    msg.erase(0, nl + 1 + length);
    ++next;
  }
}

std::vector<std::string> model_op_types(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "model.onnx", std::ios::binary);
  onnx::ModelProto m;
  std::vector<std::string> ops;
  if (!m.ParseFromIstream(&in)) return ops;
  for (const auto& n : m.graph().node())
    if (std::find(ops.begin(), ops.end(), n.op_type()) == ops.end()) ops.push_back(n.op_type());
  return ops;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Passed: return "passed";
    case Outcome::Failed: return "failed";
    case Outcome::Rejected: return "rejected";
    case Outcome::Crashed: return "crashed";
    case Outcome::OutOfScope: return "out-of-scope";
  }
  return "?";
}

bool in_scope(const std::string& op_type) { return scope().count(op_type) > 0; }

Mode parse_mode(const std::string& text) {
  Mode mode;
  mode.name = text;
  if (text == "portable") return mode;
  const std::string runtime = "runtime-delegate:";
  if (text.rfind(runtime, 0) == 0) {
    mode.runtime_delegate = text.substr(runtime.size());
    if (mode.runtime_delegate != "xnnpack")
      throw std::invalid_argument("mode '" + text + "': the only load-time delegate is xnnpack");
    return mode;
  }
  std::stringstream list(text);
  for (std::string b; std::getline(list, b, ',');) {
    if (b.empty()) throw std::invalid_argument("mode '" + text + "': an empty backend name");
    mode.backends.push_back(b);
  }
  if (mode.backends.empty()) throw std::invalid_argument("an empty mode");
  return mode;
}

std::vector<TestResult> run_test(const std::string& folder, const std::string& dir,
                                 const RunOptions& options) {
  TestResult base;
  base.folder = folder;
  base.name = fs::path(dir).filename().string();
  base.op_types = model_op_types(dir);
  std::vector<TestResult> results;
  for (const Mode& mode : options.modes) {
    results.push_back(base);
    results.back().mode = mode.name;
  }
  for (const std::string& op : base.op_types)
    if (!in_scope(op)) {
      for (TestResult& r : results) r.outcome = Outcome::OutOfScope, r.reason = "uses " + op;
      return results;
    }
  size_t next = 0;
  while (next < results.size()) {
    int fds[2];
    if (pipe(fds) != 0) {
      for (; next < results.size(); ++next) results[next].reason = "pipe failed";
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      run_in_child(dir, options, next, fds[1]);
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) msg.append(buf, static_cast<size_t>(n));
      take_records(msg, results, next);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (next < results.size() || !clean) {
      // The child died in mode `next`: that mode crashed, the rest run in a
      // new child. Dying after it reported every mode (in the compiled
      // program's destructors) is the last mode's crash.
      TestResult& r = results[std::min(next, results.size() - 1)];
      r.outcome = Outcome::Crashed;
      r.reason = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                     : "exited with status " + std::to_string(WEXITSTATUS(status)) +
                                           " (a sanitizer's report is above)";
      if (next < results.size()) ++next;
    }
  }
  return results;
}

}  // namespace etc::conformance
