// Load checks that every tensor can be read through a typed pointer, and
// init allocates no more arena than the values occupy; inputs can be
// written in place.
#include <catch2/catch.hpp>
#include <string>

#include "runtime/executor/method.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

using testing::load_program_bytes;
using testing::ProgramBytes;

TEST_CASE("a value placed off its element alignment is refused at load", "[program]") {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int y = p.output("y", {2});
  p.call_kernel("relu", {x}, {y});
  p.set_arena_offset(y, 66);
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE_FALSE(program.ok());
  CHECK(program.error() == Error::InvalidProgram);
  CHECK(program.message() == "test.etp: plan 0: value 1: arena placement misaligned");
}

TEST_CASE("a plan reserving more arena than its values use allocates what they use", "[program]") {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int y = p.output("y", {2});
  p.call_kernel("relu", {x}, {y});
  p.set_arena_size(uint64_t{1} << 50);  // a damaged size must not reach malloc
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  CHECK(method.get()->arena_bytes() == 128);  // two 64-byte-aligned float[2] values
  const float in[2] = {-1.0f, 2.0f};
  REQUIRE(method.get()->set_input(0, TensorSpec{DType::Float32, {2}}, in).ok());
  REQUIRE(method.get()->execute().ok());
  CHECK(method.get()->output(0).data_as<const float>()[1] == 2.0f);
}

TEST_CASE("an input written through mutable_input_data is what the run reads", "[program]") {
  ProgramBytes p;
  const int x = p.input("x", {3});
  const int y = p.output("y", {3});
  p.call_kernel("relu", {x}, {y});
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE(method.ok());
  Method& m = *method.get();
  CHECK(m.mutable_input_data(1) == nullptr);  // no second input
  auto* in = static_cast<float*>(m.mutable_input_data(0));
  REQUIRE(in != nullptr);
  in[0] = -1.0f, in[1] = 2.5f, in[2] = 0.5f;
  REQUIRE(m.execute().ok());
  const float* out = m.output(0).data_as<const float>();
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == 2.5f);
  CHECK(out[2] == 0.5f);
}

}  // namespace
}  // namespace etc
