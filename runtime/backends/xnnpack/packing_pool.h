#pragma once
// Where XNNPACK puts what it allocates while a delegate instance's runtimes
// are created — its packed copy of every weight above all. From the C
// library, each packed filter took fresh 4 KiB pages, one page fault each:
// most of a segmentation model's faults at start (README). A pool is one
// block mapped for the instance on 2 MiB pages (runtime/core/large_block.h),
// sized from the blob: a fault per 2 MiB.
//
// XNNPACK takes one allocator per process (xnn_initialize): packing_allocator()
// serves aligned allocations from the pool active on the calling thread, if
// any and while it has room, and everything else from the C library. Memory
// from a pool is never freed one allocation at a time: the pool goes with
// its instance, after every XNNPACK object made from it.

#include <xnnpack.h>

#include <cstddef>
#include <mutex>
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "runtime/core/aligned_buffer.h"

namespace etc::xnnpack {

// The allocator to initialize XNNPACK with.
const xnn_allocator* packing_allocator();

class PackingPool {
 public:
  // A pool of `bytes`, an AlignedBuffer (on 2 MiB pages, except under
  // AddressSanitizer); none, and every allocation from the C library, when
  // `bytes` is 0 or the allocation fails.
  explicit PackingPool(size_t bytes);
  ~PackingPool();
  PackingPool(const PackingPool&) = delete;
  PackingPool& operator=(const PackingPool&) = delete;

  // While a Scope lives, the calling thread's aligned XNNPACK allocations
  // come from this pool.
  class Scope {
   public:
    explicit Scope(PackingPool& pool);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PackingPool* previous_;
  };

  size_t capacity() const { return capacity_; }
  size_t used() const {
    const std::lock_guard<std::mutex> lock(take_mutex_);
    return used_;
  }
  // Whether `p` points into the pool's block.
  bool owns(const void* p) const;
  // `size` bytes aligned to `alignment` (a power of two, at most 64) from
  // the block; null when they do not fit. Safe from several threads at once.
  void* take(size_t alignment, size_t size);

 private:
  AlignedBuffer block_;
  size_t capacity_ = 0, used_ = 0;
  mutable std::mutex take_mutex_;
};

// The bytes to give the pool of an instance of `view`: what XNNPACK packs
// for the nodes it runs (their constants, and some room for padding and
// its operators), or 0 where that is under 2 MiB (a pool's last 2 MiB page
// would cost more than the faults it saves).
size_t packing_pool_bytes(const BlobView& view, const std::vector<bool>& native_nodes);

}  // namespace etc::xnnpack
