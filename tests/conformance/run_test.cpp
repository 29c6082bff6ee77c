#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

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

// Runs in the child process: compile, then every data set.
TestResult run_in_process(const std::string& dir, const RunOptions& options) {
  TestResult r;
  ir::ExportedProgram program;
  try {
    program = compile_onnx((fs::path(dir) / "model.onnx").string());
  } catch (const CompileError& e) {
    r.outcome = Outcome::Rejected;
    r.reason = e.what();
    return r;
  }
  if (!options.backends.empty()) {
    // Lowering must accept whatever the portable path compiles: a failure here is a defect.
    std::vector<std::unique_ptr<Partitioner>> partitioners;
    for (const std::string& b : options.backends) partitioners.push_back(make_partitioner(b));
    try {
      program = to_backend(program, CompositePartitioner(std::move(partitioners)));
    } catch (const CompileError& e) {
      r.reason = std::string("lowering: ") + e.what();
      return r;
    }
    r.delegates = static_cast<int>(program.delegates.size());
  }
  const std::vector<uint8_t> bytes = emit::serialize_program(program);
  auto loaded = Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "model.etp");
  if (!loaded.ok()) {
    r.reason = "load: " + loaded.message();
    return r;
  }
  // A load-time delegate takes what it can of the portable program.
  std::unique_ptr<Delegate> delegate;
  if (options.runtime_delegate == "xnnpack") delegate = std::make_unique<xnnpack::XnnpackDelegate>();
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

TestResult run_test(const std::string& folder, const std::string& dir, const RunOptions& options) {
  TestResult result;
  result.folder = folder;
  result.name = fs::path(dir).filename().string();
  result.op_types = model_op_types(dir);
  for (const std::string& op : result.op_types)
    if (!in_scope(op)) {
      result.outcome = Outcome::OutOfScope;
      result.reason = "uses " + op;
      return result;
    }
  int fds[2];
  if (pipe(fds) != 0) {
    result.reason = "pipe failed";
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    TestResult r;
    try {
      r = run_in_process(dir, options);
    } catch (const std::exception& e) {
      r.outcome = Outcome::Failed;
      r.reason = e.what();
    }
    const std::string msg =
        std::to_string(static_cast<int>(r.outcome)) + "\n" + std::to_string(r.delegates) + "\n" + r.reason;
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t nl = msg.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || nl == std::string::npos) {
    result.outcome = Outcome::Crashed;
    result.reason =
        WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "child failed";
    return result;
  }
  const size_t nl2 = msg.find('\n', nl + 1);
  result.outcome = static_cast<Outcome>(std::stoi(msg.substr(0, nl)));
  result.delegates = std::stoi(msg.substr(nl + 1, nl2 - nl - 1));
  result.reason = nl2 == std::string::npos ? "" : msg.substr(nl2 + 1);
  return result;
}

}  // namespace etc::conformance
