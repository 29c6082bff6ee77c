// The two ahead-of-time registries: partitioners by name (for the CLI) and
// BackendDetails by backend id (for to_backend). Both live in function-local
// statics so they exist before the first registration whatever the link
// order, and a mutex lets tests register from several threads.
#include <map>
#include <mutex>
#include <utility>

#include "compiler/backend/backend_details.h"
#include "compiler/backend/partitioner.h"
#include "compiler/common/compile_error.h"

namespace etc {
namespace {

struct PartitionerRegistry {
  std::mutex mutex;
  std::map<std::string, PartitionerFactory> factories;
};

struct BackendDetailsRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<BackendDetails>> details;
};

PartitionerRegistry& partitioner_registry() {
  static PartitionerRegistry registry;
  return registry;
}

BackendDetailsRegistry& backend_details_registry() {
  static BackendDetailsRegistry registry;
  return registry;
}

template <typename Map>
std::vector<std::string> keys(const Map& map) {
  std::vector<std::string> names;
  names.reserve(map.size());
  for (const auto& entry : map) names.push_back(entry.first);
  return names;
}

std::string joined_or_none(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string all;
  for (const std::string& name : names) all += (all.empty() ? "" : ", ") + name;
  return all;
}

}  // namespace

void register_partitioner(const std::string& name, PartitionerFactory factory) {
  if (name.empty()) throw CompileError("register_partitioner: the partitioner name is empty");
  if (!factory) throw CompileError("register_partitioner: partitioner '" + name + "' has no factory");
  PartitionerRegistry& registry = partitioner_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (!registry.factories.emplace(name, std::move(factory)).second)
    throw CompileError("a partitioner named '" + name + "' is already registered");
}

std::unique_ptr<Partitioner> make_partitioner(const std::string& name, std::vector<CompileSpec> specs) {
  PartitionerFactory factory;
  std::vector<std::string> known;
  {
    PartitionerRegistry& registry = partitioner_registry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    const auto it = registry.factories.find(name);
    if (it != registry.factories.end())
      factory = it->second;
    else
      known = keys(registry.factories);
  }
  if (!factory)
    throw CompileError("unknown partitioner '" + name + "' (registered: " + joined_or_none(known) + ")");
  // Called outside the lock: a factory may itself look up other partitioners.
  std::unique_ptr<Partitioner> partitioner = factory(std::move(specs));
  if (!partitioner) throw CompileError("the factory of partitioner '" + name + "' returned no partitioner");
  return partitioner;
}

std::vector<std::string> registered_partitioners() {
  PartitionerRegistry& registry = partitioner_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return keys(registry.factories);
}

void register_backend_details(const std::string& backend_id, std::unique_ptr<BackendDetails> details) {
  if (backend_id.empty()) throw CompileError("register_backend_details: the backend id is empty");
  if (!details)
    throw CompileError("register_backend_details: backend '" + backend_id + "' has no BackendDetails");
  BackendDetailsRegistry& registry = backend_details_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (!registry.details.emplace(backend_id, std::move(details)).second)
    throw CompileError("BackendDetails for backend '" + backend_id + "' are already registered");
}

const BackendDetails* find_backend_details(const std::string& backend_id) {
  BackendDetailsRegistry& registry = backend_details_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const auto it = registry.details.find(backend_id);
  return it == registry.details.end() ? nullptr : it->second.get();
}

std::vector<std::string> registered_backend_details() {
  BackendDetailsRegistry& registry = backend_details_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return keys(registry.details);
}

}  // namespace etc
