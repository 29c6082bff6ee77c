#include "compiler/import/onnx/isolated_check.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "compiler/common/compile_error.h"

namespace etc::onnx_import {
namespace {

// What the child sends back: one tag byte, then a message or a GraphProto.
constexpr char kInferred = 'I';
constexpr char kCheckerError = 'C';
constexpr char kInferenceError = 'S';
// libonnx's checker and inference run in well under a second on real models.
constexpr unsigned kTimeoutSeconds = 60;

bool write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// Runs in the child: the reply for the parent.
std::string check_and_infer_here(onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return kCheckerError + std::string(e.what());
  }
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    return kInferenceError + std::string(e.what());
  }
  onnx::GraphProto inferred;
  *inferred.mutable_value_info() = model.graph().value_info();
  *inferred.mutable_output() = model.graph().output();
  return kInferred + inferred.SerializeAsString();
}

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw CompileError(path + ": " + reason);
}

// One run of the child. False when it did not finish within
// kTimeoutSeconds; else its reply (empty when it died, with `status`).
bool run_child(onnx::ModelProto& model, const std::string& path, std::string* reply, int* status) {
  int fds[2];
  if (::pipe(fds) != 0) fail(path, std::string("cannot check the model: pipe: ") + std::strerror(errno));
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    fail(path, std::string("cannot check the model: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash dies by its signal, whatever handlers the parent had (a
    // sanitizer's or a fuzzer's would report it as the parent's own), and a
    // hang ends after kTimeoutSeconds.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM}) ::signal(sig, SIG_DFL);
    ::alarm(kTimeoutSeconds);
    const bool sent = write_all(fds[1], check_and_infer_here(model));
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  *reply = read_all(fds[0]);
  ::close(fds[0]);
  *status = 0;
  while (::waitpid(child, status, 0) < 0 && errno == EINTR) {
  }
  return !(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGALRM);
}

}  // namespace

void check_and_infer(onnx::ModelProto& model, const std::string& path) {
  std::string reply;
  int status = 0;
  // A child forked from a process with other threads can, rarely, wait
  // forever on a lock one of them held at the fork (the allocator's, under
  // a sanitizer): a timeout is tried once more before the model is blamed.
  if (!run_child(model, path, &reply, &status) && !run_child(model, path, &reply, &status))
    fail(path, "ONNX checker or shape inference did not finish within " + std::to_string(kTimeoutSeconds) +
                   " s, twice: the model is malformed");
  if (WIFSIGNALED(status) || reply.empty())
    fail(path, "ONNX checker or shape inference crashed on this model (" +
                   (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                        : "exit " + std::to_string(WEXITSTATUS(status))) +
                   "): the model is malformed");
  const std::string body = reply.substr(1);
  if (reply[0] == kCheckerError) fail(path, "ONNX checker rejected the model: " + body);
  if (reply[0] == kInferenceError) fail(path, "ONNX shape inference failed: " + body);
  onnx::GraphProto inferred;
  if (reply[0] != kInferred || !inferred.ParseFromString(body))
    fail(path, "ONNX shape inference returned an unreadable result");
  *model.mutable_graph()->mutable_value_info() = inferred.value_info();
  *model.mutable_graph()->mutable_output() = inferred.output();
}

}  // namespace etc::onnx_import
