#pragma once
// The flatbuffers verifier checks a vector's 4-byte length field, not that
// 8-byte elements are 8-byte aligned: a damaged file may place them 4 bytes
// off, and reading them would be undefined behaviour. Every reader of a
// [long] / [ulong] / [double] vector from untrusted bytes checks it first.
// (The bytes of a file start 8-byte aligned: mmap and heap buffers are.)

#include <cstdint>

namespace etc {

// True when a non-empty flatbuffers vector (any type with size() and
// Data()) does not start at a multiple of 8.
template <typename Vector>
bool misaligned_8(const Vector* v) {
  return v != nullptr && v->size() > 0 && reinterpret_cast<uintptr_t>(v->Data()) % 8 != 0;
}

}  // namespace etc
