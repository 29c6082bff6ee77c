#pragma once
// Non-owning view of contiguous elements. Pass by value; the viewed memory
// must outlive the span.

#include <cstddef>
#include <span>

namespace etc {

template <typename T>
using Span = std::span<T>;

}  // namespace etc
