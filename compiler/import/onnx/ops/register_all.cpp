#include "compiler/import/onnx/ops/register_all.h"

#include <mutex>

namespace etc::onnx_import {

void register_all_lowerings() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_lowerings();
    register_activation_lowerings();
    register_softmax_lowerings();
    register_conv_lowerings();
    register_linear_lowerings();
    register_pool_lowerings();
    register_norm_lowerings();
    register_shape_lowerings();
    register_constant_lowerings();
    register_resize_lowerings();
    register_reduce_lowerings();
    register_index_lowerings();
    register_scatter_gather_lowerings();
    register_composite_lowerings();
    register_quantize_lowerings();
    register_qlinear_lowerings();
    register_rnn_lowerings();
    register_control_lowerings();
  });
}

}  // namespace etc::onnx_import
