// loaded_backend: a backend in a library of its own, loaded on first use;
// when the library or its entry point is missing, the backend is
// unavailable and says why, and init refuses with the same words.
#include "runtime/backend/loaded_backend.h"

#include <catch2/catch.hpp>
#include <string>

#include "runtime/backend/context.h"
#include "runtime/backend/options.h"

namespace etc {
namespace {

TEST_CASE("a backend library that is not there leaves its backend unavailable, saying why", "[backend]") {
  const auto b = loaded_backend("libetc_no_such_backend.so", "etc_no_such_backend", "/nonexistent/dir");
  CHECK_FALSE(b->is_available());
  REQUIRE(b->why_unavailable() != nullptr);
  const std::string why = b->why_unavailable();
  CHECK(why.find("cannot load libetc_no_such_backend.so") != std::string::npos);
  CHECK(why.find("/nonexistent/dir/libetc_no_such_backend.so") != std::string::npos);
  const RuntimeOptions options;
  BackendInitContext context(nullptr, "forward", &options);
  const Result<DelegateHandle*> handle = b->init(context, nullptr, {});
  REQUIRE_FALSE(handle.ok());
  CHECK(handle.error() == Error::DelegateUnavailable);
  CHECK(handle.message() == why);
}

TEST_CASE("a library without the backend's entry point leaves it unavailable", "[backend]") {
  // The C library is a shared library everywhere this runs; it has no such entry.
  const auto b = loaded_backend("libc.so.6", "etc_no_such_entry", "/lib/x86_64-linux-gnu");
  CHECK_FALSE(b->is_available());
  REQUIRE(b->why_unavailable() != nullptr);
  CHECK(std::string(b->why_unavailable()).find("has no etc_no_such_entry") != std::string::npos);
}

}  // namespace
}  // namespace etc
