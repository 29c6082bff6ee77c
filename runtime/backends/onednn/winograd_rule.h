#pragma once
// Which convolutions the oneDNN backend runs as Winograd, and the compile
// spec that says so: one rule for the runtime (partition_builder), the
// partitioner's cost estimate and preprocess's spec check. Header only, no
// oneDNN: the compiler includes it in builds without the backend.

#include <cstdint>
#include <optional>
#include <string_view>

namespace etc::onednn {

// Compile spec "winograd": auto (the rule below), on (every 3x3 stride-1
// convolution oneDNN accepts), off.
enum class WinogradMode { kOff, kAuto, kOn };

inline std::optional<WinogradMode> parse_winograd_mode(std::string_view value) {
  if (value == "auto") return WinogradMode::kAuto;
  if (value == "on") return WinogradMode::kOn;
  if (value == "off") return WinogradMode::kOff;
  return std::nullopt;
}

// A 2-D convolution of one group, 3x3, stride 1, undilated; under kAuto
// also at least 32 input and output channels (with fewer the transforms
// cost more than the products save).
inline bool winograd_applies(WinogradMode mode, int64_t kernel_h, int64_t kernel_w, int64_t groups,
                             bool unit_strides_and_dilations, int64_t out_channels, int64_t in_channels) {
  if (mode == WinogradMode::kOff || kernel_h != 3 || kernel_w != 3 || groups != 1 ||
      !unit_strides_and_dilations)
    return false;
  return mode == WinogradMode::kOn || (out_channels >= 32 && in_channels >= 32);
}

}  // namespace etc::onednn
