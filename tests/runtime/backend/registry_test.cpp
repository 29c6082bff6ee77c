// The backend registry: names are unique, capacity is fixed, bad entries are refused.
#include "runtime/backend/registry.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "runtime/backends/demo/demo_backend.h"
#include "runtime/backends/demo/demo_format.h"
#include "runtime/backends/register_builtin.h"
#include "tests/runtime/backend/stub_backend.h"

namespace etc {
namespace {

using testing::stub_backend;

TEST_CASE("a registered backend is found by name, an unknown name is not", "[backend]") {
  testing::StubBackend a, b;
  BackendRegistry registry;
  REQUIRE(registry.register_backend(Backend{"alpha", &a}).ok());
  REQUIRE(registry.register_backend(Backend{"beta", &b}).ok());
  CHECK(registry.get_backend_class("alpha") == &a);
  CHECK(registry.get_backend_class("beta") == &b);
  CHECK(registry.get_backend_class("gamma") == nullptr);
  CHECK(registry.get_backend_class("alph") == nullptr);
  REQUIRE(registry.size() == 2);
  CHECK(std::string(registry.get(0).name) == "alpha");
  CHECK(registry.get(1).interface == &b);
  CHECK(registry.names() == "alpha, beta");
}

TEST_CASE("registering a taken name fails and names it", "[backend]") {
  testing::StubBackend a, b;
  BackendRegistry registry;
  REQUIRE(registry.register_backend(Backend{"alpha", &a}).ok());
  const Status s = registry.register_backend(Backend{"alpha", &b});
  CHECK(s.error() == Error::AlreadyRegistered);
  CHECK(s.message().find("'alpha'") != std::string::npos);
  CHECK(registry.get_backend_class("alpha") == &a);  // the first one stays
  CHECK(registry.size() == 1);
}

TEST_CASE("a full registry refuses more backends", "[backend]") {
  testing::StubBackend stub;
  std::vector<std::string> names;
  for (size_t i = 0; i <= kMaxRegisteredBackends; ++i) names.push_back("backend_" + std::to_string(i));

  BackendRegistry small(3);
  for (size_t i = 0; i < 3; ++i) REQUIRE(small.register_backend(Backend{names[i].c_str(), &stub}).ok());
  Status s = small.register_backend(Backend{names[3].c_str(), &stub});
  CHECK(s.error() == Error::RegistryFull);
  CHECK(s.message().find(names[3]) != std::string::npos);
  CHECK(small.size() == 3);

  BackendRegistry full;
  for (size_t i = 0; i < kMaxRegisteredBackends; ++i)
    REQUIRE(full.register_backend(Backend{names[i].c_str(), &stub}).ok());
  s = full.register_backend(Backend{names[kMaxRegisteredBackends].c_str(), &stub});
  CHECK(s.error() == Error::RegistryFull);
  CHECK(full.size() == kMaxRegisteredBackends);
  CHECK(full.get_backend_class(names[0]) == &stub);
}

TEST_CASE("a backend without a name or an interface is refused", "[backend]") {
  testing::StubBackend stub;
  BackendRegistry registry;
  CHECK(registry.register_backend(Backend{nullptr, &stub}).error() == Error::InvalidArgument);
  CHECK(registry.register_backend(Backend{"", &stub}).error() == Error::InvalidArgument);
  const Status s = registry.register_backend(Backend{"alpha", nullptr});
  CHECK(s.error() == Error::InvalidArgument);
  CHECK(s.message().find("'alpha'") != std::string::npos);
  CHECK(registry.size() == 0);
  CHECK(registry.names() == "none");
  // The process-wide registry applies the same rules.
  const size_t before = get_num_registered_backends();
  CHECK(register_backend(Backend{nullptr, &stub}).error() == Error::InvalidArgument);
  CHECK(register_backend(Backend{"alpha", nullptr}).error() == Error::InvalidArgument);
  CHECK(get_num_registered_backends() == before);
}

TEST_CASE("the process-wide registry lists what was registered", "[backend]") {
  testing::StubBackend& stub = stub_backend();
  const Status again = register_backend(Backend{testing::kStubBackendId, &stub});
  CHECK(again.error() == Error::AlreadyRegistered);
  CHECK(again.message().find("'stub'") != std::string::npos);
  bool listed = false;
  for (size_t i = 0; i < get_num_registered_backends(); ++i)
    listed = listed || (std::string(get_backend(i).name) == "stub" && get_backend(i).interface == &stub);
  CHECK(listed);
  CHECK(get_backend_class("stub") == &stub);
  CHECK(global_backend_registry().names().find("stub") != std::string::npos);
}

TEST_CASE("registering the built-in backends twice is harmless", "[backend][demo]") {
  REQUIRE(register_builtin_backends().ok());
  const size_t count = get_num_registered_backends();
  REQUIRE(register_builtin_backends().ok());
  CHECK(get_num_registered_backends() == count);
  BackendInterface* demo = get_backend_class(demo::kDemoBackendId);
  REQUIRE(demo != nullptr);
  CHECK(demo == demo::demo_backend());
  CHECK(demo->is_available());
}

}  // namespace
}  // namespace etc
