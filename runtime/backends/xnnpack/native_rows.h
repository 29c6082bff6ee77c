#pragma once
// Row kernels of native math nodes with AVX-512F (16 floats a vector) or
// AVX2 + FMA3 (8), where the portable loops (Eigen, built for the baseline
// x86-64) run 4 floats a vector.
//
// Softmax and log-softmax, on the exp of the native swish (swish.h): the
// row's maximum, then exp(x - max) stored and summed, then scaled by 1 /
// sum (log-softmax: x - max - log(sum)). The native AxisSoftmax nodes of
// the last axis (inner size 1) use it, and so do XNNPACK's Softmax nodes,
// which the backend takes as native nodes on CPUs that run its kernels:
// Debian's XNNPACK took ~47 us a softmax of transformer_encoder's 8 x 128 x
// 128 attention scores at one thread on Zen 5 (ONNX Runtime ~20).
//
// Layer normalization: the mean, then the variance of x - mean, then
// (x - mean) / sqrt(var + epsilon) * scale (+ bias).
//
// Under native_convolution=off, or without the native kernels, XNNPACK
// and the portable loops run them.

#include <cstddef>

#include "runtime/backends/xnnpack/blob_reader.h"

namespace etc::xnnpack {

// Whether a checked node is a Softmax the backend runs itself (on a CPU
// that runs the native kernels).
bool softmax_runs_natively(const fb::Node& node);

// Softmax (log: log-softmax) of the n floats at x into y, which may be x.
// Needs native_convolution_available().
void softmax_row(const float* x, float* y, size_t n, bool log);

// Layer normalization of the n floats at x into y (which may be x), with
// n scales and, where bias is not null, n biases. Needs
// native_convolution_available().
void layer_norm_row(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon);

}  // namespace etc::xnnpack
