// The ahead-of-time registries: partitioners by name, BackendDetails by
// backend id. They are process-wide, so names here are unique to this file.
#include <algorithm>
#include <catch2/catch.hpp>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/partitioner.h"
#include "compiler/common/compile_error.h"

using namespace etc;
using Catch::Matchers::Contains;

namespace {

class EchoPartitioner : public Partitioner {
 public:
  explicit EchoPartitioner(std::vector<CompileSpec> specs) : specs_(std::move(specs)) {}
  std::string name() const override { return "registry_test_echo"; }
  PartitionResult partition(const ir::ExportedProgram& program) const override {
    PartitionResult r;
    r.tagged_exported_program = program;
    return r;
  }
  const std::vector<CompileSpec>& specs() const { return specs_; }

 private:
  std::vector<CompileSpec> specs_;
};

class NullDetails : public BackendDetails {
 public:
  PreprocessResult preprocess(const ir::ExportedProgram&, std::span<const CompileSpec>) const override {
    return {};
  }
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void register_echo_once() {
  static const bool registered = [] {
    register_partitioner("registry_test_echo", [](std::vector<CompileSpec> specs) {
      return std::make_unique<EchoPartitioner>(std::move(specs));
    });
    return true;
  }();
  (void)registered;
}

}  // namespace

TEST_CASE("a registered partitioner is made by name with its compile specs", "[backend][registry]") {
  register_echo_once();
  CHECK(contains(registered_partitioners(), "registry_test_echo"));
  const std::vector<std::string> names = registered_partitioners();
  CHECK(std::is_sorted(names.begin(), names.end()));
  const std::unique_ptr<Partitioner> p =
      make_partitioner("registry_test_echo", {CompileSpec::from_string("threads", "2")});
  REQUIRE(p);
  CHECK(p->name() == "registry_test_echo");
  const auto& specs = dynamic_cast<const EchoPartitioner&>(*p).specs();
  REQUIRE(specs.size() == 1);
  CHECK(specs[0].value_string() == "2");
}

TEST_CASE("registering a partitioner name twice is refused", "[backend][registry]") {
  register_echo_once();
  CHECK_THROWS_WITH(register_partitioner("registry_test_echo",
                                         [](std::vector<CompileSpec> s) {
                                           return std::make_unique<EchoPartitioner>(std::move(s));
                                         }),
                    Contains("'registry_test_echo' is already registered"));
  CHECK_THROWS_AS(register_partitioner("", [](std::vector<CompileSpec>) { return nullptr; }), CompileError);
  CHECK_THROWS_AS(register_partitioner("registry_test_empty", PartitionerFactory{}), CompileError);
  CHECK(!contains(registered_partitioners(), "registry_test_empty"));
}

TEST_CASE("an unknown partitioner name lists the registered ones", "[backend][registry]") {
  register_echo_once();
  CHECK_THROWS_WITH(make_partitioner("registry_test_nope"),
                    Contains("unknown partitioner 'registry_test_nope'") && Contains("registry_test_echo"));
}

TEST_CASE("a factory that makes nothing is reported", "[backend][registry]") {
  static const bool registered = [] {
    register_partitioner("registry_test_null", [](std::vector<CompileSpec>) { return nullptr; });
    return true;
  }();
  (void)registered;
  CHECK_THROWS_WITH(make_partitioner("registry_test_null"), Contains("returned no partitioner"));
}

TEST_CASE("BackendDetails are found by backend id", "[backend][registry]") {
  static const BackendDetails* const registered = [] {
    auto details = std::make_unique<NullDetails>();
    const BackendDetails* raw = details.get();
    register_backend_details("registry_test_backend", std::move(details));
    return raw;
  }();
  CHECK(find_backend_details("registry_test_backend") == registered);
  CHECK(find_backend_details("registry_test_missing") == nullptr);
  CHECK(contains(registered_backend_details(), "registry_test_backend"));
  CHECK_THROWS_WITH(register_backend_details("registry_test_backend", std::make_unique<NullDetails>()),
                    Contains("'registry_test_backend' are already registered"));
  CHECK_THROWS_AS(register_backend_details("registry_test_other", nullptr), CompileError);
  CHECK_THROWS_AS(register_backend_details("", std::make_unique<NullDetails>()), CompileError);
  CHECK(find_backend_details("registry_test_backend") == registered);
}
