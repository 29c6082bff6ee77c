#include "runtime/backends/xnnpack/native_isa.h"

#include <cpuinfo.h>

#include <algorithm>
#include <cstdint>

#include "runtime/backends/xnnpack/native_plan.h"

namespace etc::xnnpack {

namespace {

NativeIsa cpu_isa() {
#if defined(__x86_64__)
  if (!cpuinfo_initialize()) return NativeIsa::kNone;
  if (cpuinfo_has_x86_avx512f()) return NativeIsa::kAvx512;
  if (cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3()) return NativeIsa::kAvx2;
#endif
  return NativeIsa::kNone;
}

const NativeIsa cpu_native_isa = cpu_isa();

// Whether the CPU's 512-bit operations take two 256-bit halves: AMD's
// family 19h (Zen 4; Zen 3, the family's other members, has no AVX-512).
bool splits_512_bit_ops() {
#if defined(__x86_64__)
  if (!cpuinfo_initialize() || cpuinfo_get_cores_count() == 0) return false;
  const cpuinfo_core* core = cpuinfo_get_core(0);
  if (core == nullptr || core->vendor != cpuinfo_vendor_amd) return false;
  const uint32_t base = (core->cpuid >> 8) & 0xF;
  const uint32_t family = base == 0xF ? base + ((core->cpuid >> 20) & 0xFF) : base;
  return family == 0x19;
#else
  return false;
#endif
}

}  // namespace

std::atomic<NativeIsa> detail::active_native_isa{cpu_native_isa};

void cap_native_isa(NativeIsa cap) {
  detail::active_native_isa.store(std::min(cpu_native_isa, cap), std::memory_order_relaxed);
}

bool native_convolution_available() { return native_isa() != NativeIsa::kNone; }

bool native_avx512_available() { return native_isa() == NativeIsa::kAvx512; }

size_t core_fma_lanes() {
  static const bool split = splits_512_bit_ops();
  return native_isa() == NativeIsa::kAvx512 && !split ? kFmaLanesWide : kFmaLanesNarrow;
}

size_t core_cache_bytes() {
  if (!cpuinfo_initialize() || cpuinfo_get_l2_caches_count() == 0) return size_t{1} << 20;
  const cpuinfo_cache* l2 = cpuinfo_get_l2_cache(0);
  return l2 != nullptr && l2->size > 0 ? l2->size : size_t{1} << 20;
}

}  // namespace etc::xnnpack
