#include "runtime/backends/xnnpack/packing_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "runtime/core/large_block.h"

namespace etc::xnnpack {
namespace {

thread_local PackingPool* active_pool = nullptr;

// The pools alive, for aligned_deallocate to tell their memory from the C
// library's.
std::mutex pools_mutex;
std::vector<const PackingPool*>& live_pools() {
  static std::vector<const PackingPool*> pools;
  return pools;
}

void* allocate(void*, size_t size) { return std::malloc(size); }
void* reallocate(void*, void* pointer, size_t size) { return std::realloc(pointer, size); }
void deallocate(void*, void* pointer) { std::free(pointer); }

void* aligned_allocate(void*, size_t alignment, size_t size) {
  if (active_pool != nullptr)
    if (void* p = active_pool->take(alignment, size); p != nullptr) return p;
  void* p = nullptr;
  return ::posix_memalign(&p, std::max(alignment, sizeof(void*)), std::max<size_t>(size, 1)) == 0 ? p
                                                                                                  : nullptr;
}

void aligned_deallocate(void*, void* pointer) {
  if (pointer == nullptr) return;
  {
    const std::lock_guard<std::mutex> lock(pools_mutex);
    for (const PackingPool* pool : live_pools())
      if (pool->owns(pointer)) return;  // released with its pool
  }
  std::free(pointer);
}

const xnn_allocator kAllocator{nullptr,    allocate,         reallocate,
                               deallocate, aligned_allocate, aligned_deallocate};

}  // namespace

const xnn_allocator* packing_allocator() { return &kAllocator; }

PackingPool::PackingPool(size_t bytes) {
  if (bytes == 0) return;
  block_ = AlignedBuffer::allocate(bytes);
  if (!block_) return;
  capacity_ = bytes;
  const std::lock_guard<std::mutex> lock(pools_mutex);
  live_pools().push_back(this);
}

PackingPool::~PackingPool() {
  if (!block_) return;
  const std::lock_guard<std::mutex> lock(pools_mutex);
  auto& pools = live_pools();
  pools.erase(std::remove(pools.begin(), pools.end(), this), pools.end());
}

bool PackingPool::owns(const void* p) const {
  const auto* c = static_cast<const unsigned char*>(p);
  const auto* begin = static_cast<const unsigned char*>(block_.data());
  return begin != nullptr && c >= begin && c < begin + capacity_;
}

void* PackingPool::take(size_t alignment, size_t size) {
  if (!block_ || alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > AlignedBuffer::kAlignment)
    return nullptr;
  const std::lock_guard<std::mutex> lock(take_mutex_);  // stages are created on several threads
  const size_t start = (used_ + alignment - 1) / alignment * alignment;
  if (start > capacity_ || size > capacity_ - start) return nullptr;
  used_ = start + size;
  return static_cast<unsigned char*>(block_.data()) + start;
}

PackingPool::Scope::Scope(PackingPool& pool) : previous_(active_pool) { active_pool = &pool; }
PackingPool::Scope::~Scope() { active_pool = previous_; }

size_t packing_pool_bytes(const BlobView& view, const std::vector<bool>& native_nodes) {
  const auto* nodes = view.graph->nodes();
  if (nodes == nullptr) return 0;
  std::vector<bool> counted(view.tensors.size(), false);
  size_t constants = 0, operators = 0;
  for (flatbuffers::uoffset_t n = 0; n < nodes->size(); ++n) {
    if (n < native_nodes.size() && native_nodes[n]) continue;
    ++operators;
    for (uint32_t id : *nodes->Get(n)->inputs()) {
      if (id >= view.tensors.size() || counted[id] || !view.tensors[id].is_constant()) continue;
      counted[id] = true;
      constants += view.tensors[id].numel * sizeof(float);
    }
  }
  // Packing pads output channels to XNNPACK's tile and adds the biases; an
  // operator takes a few KiB.
  const size_t bytes = constants + constants / 4 + operators * (size_t{8} << 10);
  return bytes < kLargeBlock ? 0 : bytes;
}

}  // namespace etc::xnnpack
