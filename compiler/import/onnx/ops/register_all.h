#pragma once
// One registration function per ONNX op family (ops/<family>.cpp).

namespace etc::onnx_import {

void register_elementwise_lowerings();
void register_activation_lowerings();
void register_softmax_lowerings();
void register_conv_lowerings();
void register_linear_lowerings();
void register_pool_lowerings();
void register_norm_lowerings();
void register_shape_lowerings();
void register_constant_lowerings();
void register_resize_lowerings();
void register_reduce_lowerings();
void register_index_lowerings();
void register_scatter_gather_lowerings();
void register_composite_lowerings();
void register_quantize_lowerings();
void register_qlinear_lowerings();
void register_rnn_lowerings();
void register_control_lowerings();

// Registers every family once (idempotent, thread-safe).
void register_all_lowerings();

}  // namespace etc::onnx_import
