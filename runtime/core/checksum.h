#pragma once
// A fast 64-bit checksum of a byte range, to detect corruption (a flipped
// bit in a weight, a truncated copy), not tampering: it is not a
// cryptographic hash. Four independent lanes of 8-byte words, each mixed by
// multiplication, then folded with the tail and the length. The same bytes
// give the same value on every machine (words are read little-endian).

#include <cstddef>
#include <cstdint>

namespace etc {

namespace checksum_detail {

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

inline uint64_t mix(uint64_t acc, uint64_t word) {
  acc ^= word * 0x9e3779b97f4a7c15ull;
  acc = (acc << 31) | (acc >> 33);
  return acc * 0xbf58476d1ce4e5b9ull;
}

}  // namespace checksum_detail

inline uint64_t checksum64(const void* data, size_t size) {
  using checksum_detail::load_le64;
  using checksum_detail::mix;
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                      0x082efa98ec4e6c89ull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int k = 0; k < 4; ++k) lane[k] = mix(lane[k], load_le64(p + i + 8 * k));
  uint64_t h = static_cast<uint64_t>(size);
  for (uint64_t l : lane) h = mix(h, l);
  for (; i + 8 <= size; i += 8) h = mix(h, load_le64(p + i));
  uint64_t tail = 0;
  for (size_t k = 0; i + k < size; ++k) tail |= uint64_t{p[i + k]} << (8 * k);
  h = mix(h, tail);
  h ^= h >> 29;
  return h;
}

}  // namespace etc
