#pragma once
// Window attributes of ONNX Conv, ConvTranspose and the pooling ops, read and
// checked once, with auto_pad resolved to explicit pads (edge ops only know
// explicit pads); and the conv edge op's attributes.

#include <cstdint>
#include <vector>

#include "compiler/import/onnx/lower_context.h"

namespace etc::onnx_import {

struct WindowAttrs {
  std::vector<int64_t> kernel;     // spatial kernel extent (undilated)
  std::vector<int64_t> strides;    // default 1
  std::vector<int64_t> dilations;  // default 1
  std::vector<int64_t> pads;       // begin..., end...; default 0
  std::string auto_pad;            // NOTSET, VALID, SAME_UPPER or SAME_LOWER
};

// The spatial dims of input `i` (rank >= 3: N, C, spatial...).
std::vector<int64_t> spatial_dims(LowerContext& c, int i);

// Reads strides, dilations, pads and auto_pad for `kernel.size()` spatial
// dims and checks their lengths; fails naming the attribute.
WindowAttrs read_window_attrs(LowerContext& c, std::vector<int64_t> kernel);

// Resolves auto_pad for Conv and the pools: SAME_* gives out = ceil(in / stride)
// with the odd pad at the end (UPPER) or at the begin (LOWER); VALID gives no pads.
void resolve_same_pads(LowerContext& c, const std::vector<int64_t>& in, WindowAttrs* w);

// The conv edge op's attributes for an ONNX Conv-like node (Conv,
// ConvInteger, QLinearConv) whose data and weight are inputs `x_input` and
// `w_input` (ops/conv.cpp).
ir::Attrs conv_attrs(LowerContext& c, int x_input, int w_input);

}  // namespace etc::onnx_import
