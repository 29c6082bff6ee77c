#pragma once
// FreeableBuffer: read-only bytes plus an optional function that releases
// them. Move-only; frees exactly once (on free() or destruction). Where the
// owner says so (`releases_parts`), a part of the bytes can be released
// early (release_part) while the rest is still read: the free function is
// then called with that part and must leave every byte readable (a mapped
// program file does: its pages leave resident memory and are read again
// from the file if touched).

#include <cstddef>
#include <utility>

namespace etc {

class FreeableBuffer {
 public:
  using FreeFn = void (*)(void* context, const void* data, size_t size);

  FreeableBuffer() = default;
  FreeableBuffer(const void* data, size_t size, FreeFn free_fn = nullptr, void* context = nullptr,
                 bool releases_parts = false)
      : data_(data), size_(size), free_fn_(free_fn), context_(context), releases_parts_(releases_parts) {}
  FreeableBuffer(const FreeableBuffer&) = delete;
  FreeableBuffer& operator=(const FreeableBuffer&) = delete;
  FreeableBuffer(FreeableBuffer&& o) noexcept { *this = std::move(o); }
  FreeableBuffer& operator=(FreeableBuffer&& o) noexcept {
    if (this != &o) {
      free();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      free_fn_ = std::exchange(o.free_fn_, nullptr);
      context_ = std::exchange(o.context_, nullptr);
      releases_parts_ = std::exchange(o.releases_parts_, false);
    }
    return *this;
  }
  ~FreeableBuffer() { free(); }

  // Releases the bytes; data() is null afterwards. Safe to call twice.
  void free() {
    if (data_ != nullptr && free_fn_ != nullptr) free_fn_(context_, data_, size_);
    data_ = nullptr;
    size_ = 0;
    free_fn_ = nullptr;
  }
  // Releases [begin, begin + size), which must lie within the bytes, where
  // the owner allows it; else does nothing. The bytes stay valid.
  void release_part(const void* begin, size_t size) const {
    const auto* b = static_cast<const unsigned char*>(begin);
    const auto* d = static_cast<const unsigned char*>(data_);
    if (!releases_parts_ || free_fn_ == nullptr || d == nullptr || b < d || size > size_ ||
        static_cast<size_t>(b - d) > size_ - size)
      return;
    free_fn_(context_, begin, size);
  }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_fn_ = nullptr;
  void* context_ = nullptr;
  bool releases_parts_ = false;
};

}  // namespace etc
