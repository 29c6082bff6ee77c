#include "runtime/backend/loaded_backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace etc {
namespace {

std::vector<std::filesystem::path> search_dirs(const char* build_dir) {
  if (const char* dir = std::getenv("ETC_BACKEND_DIR"); dir != nullptr) return {dir};
  std::vector<std::filesystem::path> dirs;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(self.parent_path());
  if (build_dir != nullptr && build_dir[0] != '\0') dirs.emplace_back(build_dir);
  return dirs;
}

class LoadedBackend final : public BackendInterface {
 public:
  LoadedBackend(const char* library, const char* entry, const char* build_dir)
      : library_(library), entry_(entry), build_dir_(build_dir) {}

  bool is_available() const override {
    const BackendInterface* b = get();
    return b != nullptr && b->is_available();
  }
  const char* why_unavailable() const override {
    const BackendInterface* b = get();
    return b == nullptr ? error_.c_str() : b->why_unavailable();
  }
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpecView> compile_specs) const override {
    const BackendInterface* b = get();
    if (b == nullptr) return fail(Error::DelegateUnavailable, error_);
    return b->init(context, processed, compile_specs);
  }
  // A handle exists only where init succeeded, so the backend is loaded.
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override {
    return get()->execute(context, handle, args);
  }
  Status resize(DelegateHandle* handle, Span<EValue*> args) const override {
    return get()->resize(handle, args);
  }
  std::optional<size_t> activation_bytes(const DelegateHandle* handle) const override {
    return get()->activation_bytes(handle);
  }
  void destroy(DelegateHandle* handle) const override { get()->destroy(handle); }

 private:
  // Loads once, whichever thread asks first; the library stays loaded.
  const BackendInterface* get() const {
    std::call_once(once_, [this] {
      std::string tried;
      for (const std::filesystem::path& dir : search_dirs(build_dir_)) {
        const std::string path = (dir / library_).string();
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
          const char* why = ::dlerror();
          tried += (tried.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : path);
          continue;
        }
        using Entry = BackendInterface* (*)();
        auto fn = reinterpret_cast<Entry>(::dlsym(handle, entry_));
        if (fn == nullptr) {
          tried += (tried.empty() ? "" : "; ") + path + " has no " + entry_;
          continue;
        }
        backend_ = fn();
        return;
      }
      error_ = std::string("cannot load ") + library_ + " (" + tried + ")";
    });
    return backend_;
  }

  const char* library_;
  const char* entry_;
  const char* build_dir_;
  mutable std::once_flag once_;
  mutable const BackendInterface* backend_ = nullptr;
  mutable std::string error_;
};

}  // namespace

std::unique_ptr<BackendInterface> loaded_backend(const char* library, const char* entry,
                                                 const char* build_dir) {
  return std::make_unique<LoadedBackend>(library, entry, build_dir);
}

}  // namespace etc
