// Loading verifies everything: good programs run, damaged ones fail cleanly.
#include <catch2/catch.hpp>
#include <cstring>

#include "compiler/emit/program_writer.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/graph_builder.h"

using namespace etc;
using etc::testing::GraphBuilder;

namespace {

// y = relu(x + c), x: float32[2, 3]
std::vector<uint8_t> small_program() {
  GraphBuilder b;
  auto x = b.input("x", DType::Float32, {2, 3});
  auto c = b.constant_f32("c", {3}, {1.0f, -2.0f, 0.5f});
  auto y = b.op(EdgeOp::Relu, {b.op(EdgeOp::Add, {x, c})});
  b.output(y, "y");
  return emit::serialize_program(b.build());
}

Result<Program> load(const std::vector<uint8_t>& bytes) {
  return Program::load_from_data(FileData::borrow(bytes.data(), bytes.size()), "test.etp");
}

}  // namespace

TEST_CASE("a compiled program loads and computes", "[program]") {
  const auto bytes = small_program();
  auto program = load(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  Method& m = *method.get();
  REQUIRE(m.num_inputs() == 1);
  CHECK(m.input_name(0) == "x");
  const float x[6] = {0, 1, 2, -3, -4, 5};
  REQUIRE(m.set_input(0, TensorSpec{DType::Float32, {2, 3}}, x).ok());
  REQUIRE(m.execute().ok());
  const float* y = m.output(0).data_as<const float>();
  const float want[6] = {1, 0, 2.5f, 0, 0, 5.5f};
  for (int i = 0; i < 6; ++i) CHECK(y[i] == want[i]);
  CHECK(m.output_name(0) == "y");
  // Inputs survive execution: running again gives the same result.
  REQUIRE(m.execute().ok());
  for (int i = 0; i < 6; ++i) CHECK(y[i] == want[i]);
}

TEST_CASE("constants are 64-byte aligned inside the file", "[program]") {
  const auto bytes = small_program();
  auto program = load(bytes);
  REQUIRE(program.ok());
  REQUIRE(program->fb().segments()->size() == 1);
  const uint8_t* seg = program->segment(0).data();
  CHECK((seg - bytes.data()) % kSegmentAlignment == 0);
}

TEST_CASE("a wrong input shape or dtype is refused with the expected spec", "[program]") {
  const auto bytes = small_program();
  auto program = load(bytes);
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  const float x[8] = {};
  Status s = method.get()->set_input(0, TensorSpec{DType::Float32, {2, 4}}, x);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "input 'x': expected float32[2, 3], got float32[2, 4]");
  s = method.get()->set_input(0, TensorSpec{DType::Int32, {2, 3}}, x);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("got int32[2, 3]") != std::string::npos);
}

TEST_CASE("every truncation of a program is rejected at load", "[program]") {
  const auto bytes = small_program();
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    auto program = load(cut);
    INFO("length " << len);
    CHECK_FALSE(program.ok());
  }
}

TEST_CASE("flipped bytes never crash load, init or execute", "[program]") {
  const auto bytes = small_program();
  int rejected = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[pos] ^= mask;
      auto program = load(bad);
      if (!program.ok()) {
        ++rejected;
        CHECK_FALSE(program.message().empty());
        continue;
      }
      auto method = Method::init(program.get());
      if (!method.ok()) {
        ++rejected;
        continue;
      }
      // A flip inside constant data or a name is undetectable; it must still run safely.
      Method& m = *method.get();
      for (size_t i = 0; i < m.num_inputs(); ++i) {
        std::vector<uint8_t> input(m.input_spec(i).nbytes(), 0);
        CHECK(m.set_input(i, m.input_spec(i), input.data()).ok());
      }
      (void)m.execute();
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("a program from a newer format version is refused", "[program]") {
  auto bytes = small_program();
  auto program = load(bytes);
  REQUIRE(program.ok());
  // Locate the version field by value and bump it.
  const uint32_t version = kProgramVersion;
  bool patched = false;
  const auto* root = program->fb().version() == version ? &program->fb() : nullptr;
  REQUIRE(root != nullptr);
  for (size_t i = 4; i + 4 <= bytes.size() && !patched; ++i) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + i, 4);
    if (v != version) continue;
    std::vector<uint8_t> trial = bytes;
    const uint32_t next = version + 1;
    std::memcpy(trial.data() + i, &next, 4);
    auto bumped = load(trial);
    if (!bumped.ok() && bumped.error() == Error::IncompatibleVersion) {
      CHECK(bumped.message().find("recompile") != std::string::npos);
      patched = true;
    }
  }
  CHECK(patched);
}

TEST_CASE("a missing file is reported with its path", "[program]") {
  auto program = Program::load("/nonexistent/dir/model.etp");
  REQUIRE_FALSE(program.ok());
  CHECK(program.message().find("/nonexistent/dir/model.etp") != std::string::npos);
}
