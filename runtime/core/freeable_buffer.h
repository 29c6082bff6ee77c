#pragma once
// FreeableBuffer: read-only bytes plus an optional function that releases
// them. Move-only; frees exactly once (on free() or destruction).

#include <cstddef>
#include <utility>

namespace etc {

class FreeableBuffer {
 public:
  using FreeFn = void (*)(void* context, const void* data, size_t size);

  FreeableBuffer() = default;
  FreeableBuffer(const void* data, size_t size, FreeFn free_fn = nullptr, void* context = nullptr)
      : data_(data), size_(size), free_fn_(free_fn), context_(context) {}
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
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_fn_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace etc
