#pragma once
// Which instruction set the backend's own kernels run on, detected once as
// the program starts (cpuinfo), and the size of a core's own cache that
// their blocking is planned against.

#include <atomic>
#include <cstddef>

namespace etc::xnnpack {

// The instruction sets the backend's own kernels are written for: AVX-512F
// (every native kernel), AVX2 with FMA3 (the convolution's micro-kernel,
// hence direct and Winograd convolutions, fully connected nodes and
// deconvolutions, and the native swish; depthwise convolutions stay on
// XNNPACK and channel scales run as a scalar loop), or none (everything on
// XNNPACK).
enum class NativeIsa { kNone, kAvx2, kAvx512 };
namespace detail {
// What this CPU offers (detected as the program starts), capped by
// cap_native_isa.
extern std::atomic<NativeIsa> active_native_isa;
}  // namespace detail
// The instruction set the native kernels run on; one load, so the
// micro-kernel's dispatch reads it per tile.
inline NativeIsa native_isa() { return detail::active_native_isa.load(std::memory_order_relaxed); }
// Runs the native kernels as if the CPU offered no more than `cap`
// (kAvx512: no cap). Tests use it to run the AVX2 kernels on CPUs with
// AVX-512; delegates read it as they are planned and kernels as they run.
void cap_native_isa(NativeIsa cap);
// Whether this CPU can run the convolution kernel (AVX-512F, or AVX2 with FMA3).
bool native_convolution_available();
// Whether it can run the kernels written for AVX-512F alone.
bool native_avx512_available();
// Float multiply-adds a core of this CPU retires a cycle on the
// instruction set the native kernels run on (native_plan.h kFmaLanesWide,
// kFmaLanesNarrow): 16 on AVX2, and with AVX-512 on AMD's family 19h (Zen
// 4 splits a 512-bit operation into two halves); 32 on other AVX-512 CPUs
// (Intel's with two 512-bit FMA pipes, AMD Zen 5). Intel's client cores of
// one 512-bit pipe (Ice Lake, Tiger Lake) count as 32: their models are
// not told apart. The Winograd plan weighs arithmetic against memory by it.
size_t core_fma_lanes();
// The bytes of the cache private to one core (L2), 1 MiB where the CPU
// does not say.
size_t core_cache_bytes();

}  // namespace etc::xnnpack
