#include "runtime/backend/registry.h"

namespace etc {
namespace {

// Constant-initialised: usable from any other static initialiser, and no
// registration depends on initialisation order.
constinit BackendRegistry g_registry;

}  // namespace

Status BackendRegistry::register_backend(const Backend& backend) {
  if (backend.name == nullptr || backend.name[0] == '\0')
    return fail(Error::InvalidArgument, "cannot register a backend without a name");
  if (backend.interface == nullptr)
    return fail(Error::InvalidArgument, "cannot register backend '", backend.name, "' without an interface");
  if (get_backend_class(backend.name) != nullptr)
    return fail(Error::AlreadyRegistered, "a backend named '", backend.name, "' is already registered");
  if (size_ >= capacity_)
    return fail(Error::RegistryFull, "cannot register backend '", backend.name, "': the registry is full (",
                std::to_string(capacity_), " backends: ", names(), ")");
  backends_[size_++] = backend;
  return Status::Ok();
}

BackendInterface* BackendRegistry::get_backend_class(std::string_view name) const {
  for (size_t i = 0; i < size_; ++i)
    if (name == backends_[i].name) return backends_[i].interface;
  return nullptr;
}

std::string BackendRegistry::names() const {
  if (size_ == 0) return "none";
  std::string out;
  for (size_t i = 0; i < size_; ++i) {
    if (i > 0) out += ", ";
    out += backends_[i].name;
  }
  return out;
}

BackendRegistry& global_backend_registry() { return g_registry; }

Status register_backend(const Backend& backend) { return g_registry.register_backend(backend); }

BackendInterface* get_backend_class(std::string_view name) { return g_registry.get_backend_class(name); }

size_t get_num_registered_backends() { return g_registry.size(); }

Backend get_backend(size_t index) { return g_registry.get(index); }

}  // namespace etc
