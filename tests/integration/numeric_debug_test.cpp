// Numeric debugging end to end (what `etc debug` runs): the XNNPACK program
// of a model against its portable-only program, per ONNX node — clean, then
// with one node's weights damaged in the compiled blob.
#include "compiler/devtools/numeric_debug.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "compiler/backend/to_backend.h"
#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "partitioners/register.h"
#include "partitioners/xnnpack/xnnpack_partitioner.h"
#include "preprocessors/register.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/backends/xnnpack/blob_reader.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

struct Compiled {
  std::vector<uint8_t> reference, delegated;
};

Compiled compile_mini_cnn() {
  register_builtin_partitioners();
  register_builtin_preprocessors();
  REQUIRE(register_builtin_backends().ok());
  const ir::ExportedProgram program = compile_onnx(ETC_SOURCE_DIR "/tests/models/example/mini_cnn.onnx");
  return {emit::serialize_program(program),
          emit::serialize_program(to_backend(program, xnnpack::XnnpackPartitioner()))};
}

std::vector<devtools::InputTensor> image_input() {
  devtools::InputTensor x{TensorSpec{DType::Float32, Shape{1, 3, 64, 64}}, {}};
  std::vector<float> values(3 * 64 * 64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  x.bytes.resize(values.size() * sizeof(float));
  std::memcpy(x.bytes.data(), values.data(), x.bytes.size());
  return {x};
}

devtools::GapReport compare(const Compiled& c, double tolerance) {
  auto reference = testing::load_program_bytes(c.reference, "portable.etp");
  auto delegated = testing::load_program_bytes(c.delegated, "xnnpack.etp");
  REQUIRE(reference.ok());
  REQUIRE(delegated.ok());
  RuntimeOptions options;
  const devtools::Etdump ref = devtools::record_intermediate_outputs(reference.get(), image_input(), options);
  options.delegate_detail = DelegateDetail::kNodeOutputs;
  const devtools::Etdump test =
      devtools::record_intermediate_outputs(delegated.get(), image_input(), options);
  return devtools::compare_intermediate_outputs(reference.get(), ref, delegated.get(), test, tolerance);
}

// Adds 0.5 to the first weights of the last convolution in the XNNPACK blob
// and returns the ONNX node names its debug handle map entry covers.
std::vector<std::string> damage_last_convolution(std::vector<uint8_t>& bytes) {
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  const fb::Delegate& delegate = *program.get().fb().delegates()->Get(0);
  const uint8_t* blob = delegate.segment() >= 0
                            ? program.get().segment(static_cast<uint32_t>(delegate.segment())).data()
                            : delegate.inline_data()->data();
  const size_t size = delegate.segment() >= 0
                          ? program.get().segment(static_cast<uint32_t>(delegate.segment())).size()
                          : delegate.inline_data()->size();
  auto view = xnnpack::read_xnnpack_blob(blob, size);
  REQUIRE(view.ok());
  const xnnpack::fb::Node* conv = nullptr;
  for (const xnnpack::fb::Node* node : *view.get().graph->nodes())
    if (node->type() == xnnpack::fb::NodeType::Convolution2d) conv = node;
  REQUIRE(conv != nullptr);
  const xnnpack::TensorInfo& filter = view.get().tensors[conv->inputs()->Get(1)];
  REQUIRE(filter.is_constant());
  auto* weights = bytes.data() + (filter.constant - bytes.data());
  for (size_t i = 0; i < 8; ++i) {
    float w = 0;
    std::memcpy(&w, weights + i * sizeof(float), sizeof(float));
    w += 0.5f;
    std::memcpy(weights + i * sizeof(float), &w, sizeof(float));
  }
  std::vector<std::string> names;
  for (const fb::DelegateMapEntry* entry : *delegate.debug_handle_map()) {
    if (entry->int_id() != static_cast<int64_t>(conv->debug_id())) continue;
    for (int32_t h : *entry->debug_handles())
      for (const fb::DebugHandleInfo* info : *program.get().fb().debug_handles())
        if (info->handle() == h) names.push_back(info->onnx_node_name()->str());
  }
  return names;
}

TEST_CASE("every ONNX node of a delegated model matches the portable kernels within 1e-5",
          "[numeric_debug][xnnpack]") {
  const devtools::GapReport report = compare(compile_mini_cnn(), 1e-5);
  CHECK(report.silent_delegates.empty());
  CHECK(report.num_compared() >= 8);
  CHECK(report.first_over == -1);
  for (const devtools::NodeGap& g : report.nodes) {
    INFO(g.onnx_name << ": " << g.note);
    CHECK(g.placement == "xnnpack");
    if (g.compared) CHECK(g.relative_error <= 1e-5);
  }
}

TEST_CASE("numeric debugging names the first node whose delegated output is wrong",
          "[numeric_debug][xnnpack]") {
  Compiled c = compile_mini_cnn();
  const std::vector<std::string> damaged = damage_last_convolution(c.delegated);
  REQUIRE(damaged == std::vector<std::string>{"pw_conv"});
  const devtools::GapReport report = compare(c, 1e-5);
  REQUIRE(report.first_over >= 0);
  const devtools::NodeGap& first = report.nodes[static_cast<size_t>(report.first_over)];
  CHECK(std::find(first.covers.begin(), first.covers.end(), "pw_conv") != first.covers.end());
  CHECK(first.relative_error > 1e-3);
  // Nodes before it are still exact.
  for (int i = 0; i < report.first_over; ++i)
    CHECK(report.nodes[static_cast<size_t>(i)].relative_error <= 1e-5);
}

}  // namespace
}  // namespace etc
