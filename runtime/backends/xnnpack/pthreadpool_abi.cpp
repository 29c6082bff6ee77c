// pthreadpool's C interface (pthreadpool.h), implemented on TaskPool.
//
// XNNPACK calls these functions for every parallel loop of its operators;
// linked into the program that uses the backend, these definitions are the
// ones the dynamic linker binds XNNPACK's calls to (an executable's symbols
// come before those of libpthreadpool.so, which libXNNPACK.so still names as
// a dependency). task_pool_serves_pthreadpool() checks that this holds.
//
// Semantics follow pthreadpool.h: a null pool runs the loop on the caller; a
// tiled dimension passes each tile's first index, and its size after all the
// indices; `_with_uarch` functions get the default microarchitecture index
// (the pool does not tell cores apart). PTHREADPOOL_FLAG_DISABLE_DENORMALS is
// honoured on every thread that runs a chunk; PTHREADPOOL_FLAG_YIELD_WORKERS
// is not needed (idle workers always sleep after a short spin). The
// deprecated pthreadpool_compute_* functions are not provided.

#include <dlfcn.h>
#include <pthreadpool.h>

#include <algorithm>
#include <array>
#include <utility>

#include "runtime/backends/xnnpack/threadpool.h"
#include "runtime/core/task_pool.h"

namespace etc::xnnpack {
namespace {

constexpr size_t kMaxDims = 6;

// One loop over a grid of up to six dimensions, the last `Tiled` of them in
// tiles; items are tiles, numbered row-major.
struct Grid {
  void* function = nullptr;
  void* context = nullptr;
  uint32_t uarch = 0;
  size_t range[kMaxDims] = {};
  size_t tile[kMaxDims] = {};
  size_t tiles[kMaxDims] = {};  // per dimension
  size_t items = 1;
};

// Calls the task with the item's indices (tile starts) and then the sizes
// of its tiled dimensions, in the order of pthreadpool.h's task types.
template <size_t Dims, size_t Tiled, bool WithId, size_t... I, size_t... T>
void call(const Grid& g, const size_t* start, const size_t* size, std::index_sequence<I...>,
          std::index_sequence<T...>) {
  if constexpr (WithId) {
    using Task = void (*)(void*, uint32_t, decltype(I, size_t{})..., decltype(T, size_t{})...);
    reinterpret_cast<Task>(g.function)(g.context, g.uarch, start[I]..., size[Dims - Tiled + T]...);
  } else {
    using Task = void (*)(void*, decltype(I, size_t{})..., decltype(T, size_t{})...);
    reinterpret_cast<Task>(g.function)(g.context, start[I]..., size[Dims - Tiled + T]...);
  }
}

template <size_t Dims, size_t Tiled, bool WithId>
void run_items(const void* context, size_t begin, size_t end) {
  const Grid& g = *static_cast<const Grid*>(context);
  size_t at[Dims];  // the item's tile index in each dimension
  size_t rest = begin;
  for (size_t d = Dims; d-- > 0;) {
    at[d] = rest % g.tiles[d];
    rest /= g.tiles[d];
  }
  size_t start[Dims], size[Dims];
  for (size_t item = begin; item < end; ++item) {
    for (size_t d = 0; d < Dims; ++d) {
      start[d] = at[d] * g.tile[d];
      size[d] = std::min(g.tile[d], g.range[d] - start[d]);
    }
    call<Dims, Tiled, WithId>(g, start, size, std::make_index_sequence<Dims>(),
                              std::make_index_sequence<Tiled>());
    for (size_t d = Dims; d-- > 0;) {
      if (++at[d] < g.tiles[d]) break;
      at[d] = 0;
    }
  }
}

// `ranges` and `tiles` of the last `Tiled` dimensions; the others untiled.
template <size_t Dims, size_t Tiled, bool WithId = false>
void parallelize(pthreadpool_t pool, void* function, void* context, uint32_t flags,
                 const std::array<size_t, Dims>& ranges, const std::array<size_t, Tiled>& tiles,
                 uint32_t uarch = 0) {
  Grid g;
  g.function = function;
  g.context = context;
  g.uarch = uarch;
  for (size_t d = 0; d < Dims; ++d) {
    g.range[d] = ranges[d];
    g.tile[d] = d + Tiled >= Dims ? std::max<size_t>(1, tiles[d + Tiled - Dims]) : 1;
    g.tiles[d] = g.range[d] / g.tile[d] + (g.range[d] % g.tile[d] != 0);
    g.items *= g.tiles[d];
  }
  if (g.items == 0) return;
  const bool flush = (flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) != 0;
  TaskPool::Body body = run_items<Dims, Tiled, WithId>;
  if (pool == nullptr)
    TaskPool::run_inline(g.items, body, &g, flush);
  else
    reinterpret_cast<TaskPool*>(pool)->run(g.items, body, &g, flush);
}

template <class F>
void* as_pointer(F f) {
  return reinterpret_cast<void*>(f);
}

}  // namespace

bool task_pool_serves_pthreadpool() {
  // Typed, to pick the C functions over pthreadpool.h's C++ functor overloads.
  void (*const one_d)(pthreadpool_t, pthreadpool_task_1d_t, void*, size_t, uint32_t) =
      pthreadpool_parallelize_1d;
  void (*const tiled)(pthreadpool_t, pthreadpool_task_2d_tile_2d_t, void*, size_t, size_t, size_t, size_t,
                      uint32_t) = pthreadpool_parallelize_2d_tile_2d;
  return dlsym(RTLD_DEFAULT, "pthreadpool_parallelize_1d") == as_pointer(one_d) &&
         dlsym(RTLD_DEFAULT, "pthreadpool_parallelize_2d_tile_2d") == as_pointer(tiled);
}

}  // namespace etc::xnnpack

using etc::TaskPool;
using etc::xnnpack::as_pointer;
using etc::xnnpack::parallelize;

extern "C" {

// A TaskPool stands behind every pthreadpool_t made here.
pthreadpool_t pthreadpool_create(size_t threads_count) {
  return reinterpret_cast<pthreadpool_t>(TaskPool::create(threads_count).release());
}

void pthreadpool_destroy(pthreadpool_t pool) { delete reinterpret_cast<TaskPool*>(pool); }

size_t pthreadpool_get_threads_count(pthreadpool_t pool) {
  return pool == nullptr ? 1 : reinterpret_cast<TaskPool*>(pool)->threads();
}

void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t f, void* c, size_t r,
                                uint32_t flags) {
  parallelize<1, 0>(pool, as_pointer(f), c, flags, {r}, {});
}

void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t pool, pthreadpool_task_1d_with_id_t f, void* c,
                                           uint32_t default_uarch, uint32_t, size_t r, uint32_t flags) {
  parallelize<1, 0, true>(pool, as_pointer(f), c, flags, {r}, {}, default_uarch);
}

void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t f, void* c,
                                        size_t r, size_t t, uint32_t flags) {
  parallelize<1, 1>(pool, as_pointer(f), c, flags, {r}, {t});
}

void pthreadpool_parallelize_2d(pthreadpool_t pool, pthreadpool_task_2d_t f, void* c, size_t ri, size_t rj,
                                uint32_t flags) {
  parallelize<2, 0>(pool, as_pointer(f), c, flags, {ri, rj}, {});
}

void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t pool, pthreadpool_task_2d_tile_1d_t f, void* c,
                                        size_t ri, size_t rj, size_t tj, uint32_t flags) {
  parallelize<2, 1>(pool, as_pointer(f), c, flags, {ri, rj}, {tj});
}

void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t pool, pthreadpool_task_2d_tile_2d_t f, void* c,
                                        size_t ri, size_t rj, size_t ti, size_t tj, uint32_t flags) {
  parallelize<2, 2>(pool, as_pointer(f), c, flags, {ri, rj}, {ti, tj});
}

void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_2d_tile_2d_with_id_t f, void* c,
                                                   uint32_t default_uarch, uint32_t, size_t ri, size_t rj,
                                                   size_t ti, size_t tj, uint32_t flags) {
  parallelize<2, 2, true>(pool, as_pointer(f), c, flags, {ri, rj}, {ti, tj}, default_uarch);
}

void pthreadpool_parallelize_3d(pthreadpool_t pool, pthreadpool_task_3d_t f, void* c, size_t ri, size_t rj,
                                size_t rk, uint32_t flags) {
  parallelize<3, 0>(pool, as_pointer(f), c, flags, {ri, rj, rk}, {});
}

void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t pool, pthreadpool_task_3d_tile_1d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t tk, uint32_t flags) {
  parallelize<3, 1>(pool, as_pointer(f), c, flags, {ri, rj, rk}, {tk});
}

void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t pool, pthreadpool_task_3d_tile_2d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t tj, size_t tk,
                                        uint32_t flags) {
  parallelize<3, 2>(pool, as_pointer(f), c, flags, {ri, rj, rk}, {tj, tk});
}

void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_3d_tile_2d_with_id_t f, void* c,
                                                   uint32_t default_uarch, uint32_t, size_t ri, size_t rj,
                                                   size_t rk, size_t tj, size_t tk, uint32_t flags) {
  parallelize<3, 2, true>(pool, as_pointer(f), c, flags, {ri, rj, rk}, {tj, tk}, default_uarch);
}

void pthreadpool_parallelize_4d(pthreadpool_t pool, pthreadpool_task_4d_t f, void* c, size_t ri, size_t rj,
                                size_t rk, size_t rl, uint32_t flags) {
  parallelize<4, 0>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl}, {});
}

void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t pool, pthreadpool_task_4d_tile_1d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t tl,
                                        uint32_t flags) {
  parallelize<4, 1>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl}, {tl});
}

void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t pool, pthreadpool_task_4d_tile_2d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t tk, size_t tl,
                                        uint32_t flags) {
  parallelize<4, 2>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl}, {tk, tl});
}

void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_4d_tile_2d_with_id_t f, void* c,
                                                   uint32_t default_uarch, uint32_t, size_t ri, size_t rj,
                                                   size_t rk, size_t rl, size_t tk, size_t tl,
                                                   uint32_t flags) {
  parallelize<4, 2, true>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl}, {tk, tl}, default_uarch);
}

void pthreadpool_parallelize_5d(pthreadpool_t pool, pthreadpool_task_5d_t f, void* c, size_t ri, size_t rj,
                                size_t rk, size_t rl, size_t rm, uint32_t flags) {
  parallelize<5, 0>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm}, {});
}

void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t pool, pthreadpool_task_5d_tile_1d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t rm, size_t tm,
                                        uint32_t flags) {
  parallelize<5, 1>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm}, {tm});
}

void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t pool, pthreadpool_task_5d_tile_2d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t rm, size_t tl,
                                        size_t tm, uint32_t flags) {
  parallelize<5, 2>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm}, {tl, tm});
}

void pthreadpool_parallelize_6d(pthreadpool_t pool, pthreadpool_task_6d_t f, void* c, size_t ri, size_t rj,
                                size_t rk, size_t rl, size_t rm, size_t rn, uint32_t flags) {
  parallelize<6, 0>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm, rn}, {});
}

void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t pool, pthreadpool_task_6d_tile_1d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t rm, size_t rn,
                                        size_t tn, uint32_t flags) {
  parallelize<6, 1>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm, rn}, {tn});
}

void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t pool, pthreadpool_task_6d_tile_2d_t f, void* c,
                                        size_t ri, size_t rj, size_t rk, size_t rl, size_t rm, size_t rn,
                                        size_t tm, size_t tn, uint32_t flags) {
  parallelize<6, 2>(pool, as_pointer(f), c, flags, {ri, rj, rk, rl, rm, rn}, {tm, tn});
}

}  // extern "C"
