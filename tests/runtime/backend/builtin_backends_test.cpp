// The built-in backends a build registers: demo always, XNNPACK unless the
// runtime was built with -DETC_BACKEND_XNNPACK=OFF. A program delegating to a
// backend this build lacks fails at init, naming the backends it has.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "runtime/backend/interface.h"
#include "runtime/backends/register_builtin.h"
#include "runtime/executor/method.h"
#include "tests/support/program_bytes.h"

namespace etc {
namespace {

TEST_CASE("a program delegating to a backend this build lacks fails at init naming the registered ones",
          "[backend]") {
  REQUIRE(register_builtin_backends().ok());
  CHECK(get_backend_class("demo") != nullptr);
#ifdef ETC_TEST_WITHOUT_XNNPACK
  CHECK(get_backend_class("xnnpack") == nullptr);
  const std::string missing = "xnnpack";
#else
  CHECK(get_backend_class("xnnpack") != nullptr);
  const std::string missing = "no_such_backend";
#endif
  testing::ProgramBytes p;
  const int x = p.input("x", {4});
  const int y = p.output("y", {4});
  p.call_delegate(p.delegate(missing, "blob"), {x}, {y});
  const std::vector<uint8_t> bytes = p.build();
  auto program = testing::load_program_bytes(bytes, "needs.etp");
  REQUIRE(program.ok());
  auto method = Method::init(program.get());
  REQUIRE_FALSE(method.ok());
  INFO(method.message());
  CHECK(method.message().find("'" + missing + "', which is not registered (registered: ") !=
        std::string::npos);
  CHECK(method.message().find("demo") != std::string::npos);
}

}  // namespace
}  // namespace etc
