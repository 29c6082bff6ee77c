// Load refuses programs whose delegate calls or delegate table are damaged,
// and says which instruction or delegate is at fault.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/program_bytes.h"

namespace etc {
namespace {

using testing::load_program_bytes;
using testing::ProgramBytes;
using Placement = ProgramBytes::Placement;

// The message of a load that must fail with InvalidProgram.
std::string load_error(const ProgramBytes& p) {
  const auto bytes = p.build();
  auto program = load_program_bytes(bytes);
  REQUIRE_FALSE(program.ok());
  CHECK(program.error() == Error::InvalidProgram);
  return program.message();
}

TEST_CASE("a well-formed delegate call loads", "[backend]") {
  for (auto placement : {Placement::Inline, Placement::Segment}) {
    ProgramBytes p;
    const int x = p.input("x", {2});
    const int c = p.constant("c", {2}, {1, 2});
    const int y = p.output("y", {2});
    p.call_delegate(p.delegate("stub", "blob", {{"k", "v"}}, placement), {x, c}, {y});
    const auto bytes = p.build();
    auto program = load_program_bytes(bytes);
    REQUIRE(program.ok());
  }
}

TEST_CASE("a delegate call's value indices must be in range", "[backend]") {
  ProgramBytes in;
  const int y = in.output("y", {2});
  in.call_delegate(in.delegate("stub", "b"), {7}, {y});
  CHECK(load_error(in) == "test.etp: plan 0: instruction 0 refers to value 7 of 1");

  ProgramBytes absent;
  const int y2 = absent.output("y", {2});
  absent.call_delegate(absent.delegate("stub", "b"), {-1}, {y2});
  CHECK(load_error(absent).find("instruction 0 refers to value -1") != std::string::npos);

  ProgramBytes out;
  const int x = out.input("x", {2});
  out.call_delegate(out.delegate("stub", "b"), {x}, {3});
  CHECK(load_error(out).find("instruction 0 refers to value 3") != std::string::npos);
}

TEST_CASE("a delegate call may not write constants or graph inputs", "[backend]") {
  ProgramBytes to_input;
  const int x = to_input.input("x", {2});
  const int x2 = to_input.input("x2", {2});
  to_input.call_delegate(to_input.delegate("stub", "b"), {x}, {x2});
  CHECK(load_error(to_input) == "test.etp: plan 0: instruction 0 writes to constant or input value 1");

  ProgramBytes to_const;
  const int xi = to_const.input("x", {2});
  const int c = to_const.constant("c", {2}, {1, 2});
  to_const.call_delegate(to_const.delegate("stub", "b"), {xi}, {c});
  CHECK(load_error(to_const).find("instruction 0 writes to constant or input value 1") != std::string::npos);
}

TEST_CASE("a delegate call may not read and write the same value", "[backend]") {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int t = p.activation("t", {2});
  const int y = p.output("y", {2});
  p.call_kernel("relu", {x}, {t});
  p.call_delegate(p.delegate("stub", "b"), {t}, {t, y});
  CHECK(load_error(p).find("instruction 1: value 1 is both an input and an output") != std::string::npos);
}

TEST_CASE("a delegate call's delegate index must be in range", "[backend]") {
  ProgramBytes p;
  const int x = p.input("x", {2});
  const int y = p.output("y", {2});
  p.delegate("stub", "b");
  p.call_delegate(1, {x}, {y});
  CHECK(load_error(p) == "test.etp: plan 0: instruction 0: delegate 1 out of range (1 delegates)");
}

TEST_CASE("a delegate's processed bytes are inline or in one segment, not both or neither", "[backend]") {
  auto program_with = [](Placement placement) {
    ProgramBytes p;
    const int x = p.input("x", {2});
    const int y = p.output("y", {2});
    p.call_delegate(p.delegate("stub", "blob", {}, placement), {x}, {y});
    return p;
  };
  CHECK(load_error(program_with(Placement::Both)) ==
        "test.etp: delegate 0: processed bytes both inline and in a segment");
  CHECK(load_error(program_with(Placement::Neither)) ==
        "test.etp: delegate 0: no processed bytes (neither inline nor a segment)");
}

TEST_CASE("a delegate needs a backend id and compile spec keys", "[backend]") {
  ProgramBytes no_id;
  const int x = no_id.input("x", {2});
  const int y = no_id.output("y", {2});
  no_id.call_delegate(no_id.delegate("", "b"), {x}, {y});
  CHECK(load_error(no_id) == "test.etp: delegate 0: empty backend id");

  ProgramBytes no_key;
  const int x2 = no_key.input("x", {2});
  const int y2 = no_key.output("y", {2});
  no_key.delegate("stub", "b", {{"ok", "1"}});
  no_key.call_delegate(no_key.delegate("stub", "b", {{"a", "1"}, {"", "2"}}), {x2}, {y2});
  CHECK(load_error(no_key) == "test.etp: delegate 1: compile spec 1 has an empty key");
}

}  // namespace
}  // namespace etc
