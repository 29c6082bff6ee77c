#pragma once
// ONNX TensorProto ⇄ etc tensors.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/tensor.h"

namespace etc::onnx_import {

// etc dtype of an ONNX TensorProto data type, or Invalid when etc has none.
DType dtype_from_onnx(int32_t onnx_type);
int32_t dtype_to_onnx(DType dtype);
// Readable ONNX type name ("FLOAT16") for messages.
std::string onnx_type_name(int32_t onnx_type);

struct HostTensor {
  TensorSpec spec;
  std::vector<uint8_t> bytes;
};

// Decodes a TensorProto whose data is inline (raw_data or typed fields).
// Fails naming the tensor when the type is unsupported or the data size is wrong.
Result<HostTensor> decode_tensor(const onnx::TensorProto& t);
// Builds a TensorProto (raw_data) from spec + bytes.
onnx::TensorProto encode_tensor(const std::string& name, const TensorSpec& spec, const void* data);

}  // namespace etc::onnx_import
