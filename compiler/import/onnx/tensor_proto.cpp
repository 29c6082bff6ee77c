#include "compiler/import/onnx/tensor_proto.h"

#include <cstring>

#include "compiler/common/limits.h"

namespace etc::onnx_import {

using onnx::TensorProto_DataType;

DType dtype_from_onnx(int32_t t) {
  switch (t) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT: return DType::Float32;
    case TensorProto_DataType::TensorProto_DataType_DOUBLE: return DType::Float64;
    case TensorProto_DataType::TensorProto_DataType_INT64: return DType::Int64;
    case TensorProto_DataType::TensorProto_DataType_INT32: return DType::Int32;
    case TensorProto_DataType::TensorProto_DataType_BOOL: return DType::Bool;
    case TensorProto_DataType::TensorProto_DataType_UINT8: return DType::UInt8;
    case TensorProto_DataType::TensorProto_DataType_INT8: return DType::Int8;
    default: return DType::Invalid;
  }
}

int32_t dtype_to_onnx(DType d) {
  switch (d) {
    case DType::Float32: return TensorProto_DataType::TensorProto_DataType_FLOAT;
    case DType::Float64: return TensorProto_DataType::TensorProto_DataType_DOUBLE;
    case DType::Int64: return TensorProto_DataType::TensorProto_DataType_INT64;
    case DType::Int32: return TensorProto_DataType::TensorProto_DataType_INT32;
    case DType::Bool: return TensorProto_DataType::TensorProto_DataType_BOOL;
    case DType::UInt8: return TensorProto_DataType::TensorProto_DataType_UINT8;
    case DType::Int8: return TensorProto_DataType::TensorProto_DataType_INT8;
    case DType::Invalid: break;
  }
  return 0;
}

std::string onnx_type_name(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<TensorProto_DataType>(t));
  return "type " + std::to_string(t);
}

Result<HostTensor> decode_tensor(const onnx::TensorProto& t) {
  HostTensor out;
  out.spec.dtype = dtype_from_onnx(t.data_type());
  const std::string name = "tensor '" + t.name() + "'";
  if (out.spec.dtype == DType::Invalid)
    return fail(Error::NotSupported, name, ": element type ", onnx_type_name(t.data_type()),
                " is not supported");
  if (t.dims_size() > kMaxRank) return fail(Error::NotSupported, name, ": rank above 8");
  for (int64_t d : t.dims()) {
    if (d < 0) return fail(Error::InvalidArgument, name, ": negative dim");
    out.spec.shape.push_back(d);
  }
  if (const std::string error = tensor_size_error(out.spec); !error.empty())
    return fail(Error::InvalidArgument, name, ": ", error);
  const size_t nbytes = out.spec.nbytes();
  const int64_t n = out.spec.shape.numel();
  if (nbytes == 0) return out;  // empty tensor: nothing to copy (and memcpy must not see null)
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    return fail(Error::InvalidArgument, name, ": external data was not loaded");
  // The data is checked against the shape before anything is allocated.
  auto check_count = [&](int64_t got, const char* unit, int64_t want) -> Status {
    if (got == want) return Status::Ok();
    return fail(Error::InvalidArgument, name, ": holds ", std::to_string(got), " ", unit, " but its shape ",
                out.spec.shape.str(), " needs ", std::to_string(want));
  };
  if (t.has_raw_data()) {
    ETC_TRY(check_count(static_cast<int64_t>(t.raw_data().size()), "bytes", static_cast<int64_t>(nbytes)));
    out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    // The typed repeated field of this dtype, copied as is.
    auto copy_field = [&](const auto& field) -> Status {
      ETC_TRY(check_count(field.size(), "elements", n));
      out.bytes.resize(nbytes);
      std::memcpy(out.bytes.data(), field.data(), nbytes);
      return Status::Ok();
    };
    switch (out.spec.dtype) {
      case DType::Float32: ETC_TRY(copy_field(t.float_data())); break;
      case DType::Float64: ETC_TRY(copy_field(t.double_data())); break;
      case DType::Int64: ETC_TRY(copy_field(t.int64_data())); break;
      case DType::Int32: ETC_TRY(copy_field(t.int32_data())); break;
      default:  // bool, uint8, int8 are stored one per int32
        ETC_TRY(check_count(t.int32_data_size(), "elements", n));
        out.bytes.resize(nbytes);
        for (int64_t i = 0; i < n; ++i)
          out.bytes[i] = static_cast<uint8_t>(t.int32_data(static_cast<int>(i)));
        break;
    }
  }
  if (out.spec.dtype == DType::Bool)  // any non-zero byte is true; kernels need exactly 1
    for (uint8_t& b : out.bytes) b = b != 0;
  return out;
}

onnx::TensorProto encode_tensor(const std::string& name, const TensorSpec& spec, const void* data) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dtype_to_onnx(spec.dtype));
  for (int64_t d : spec.shape) t.add_dims(d);
  t.set_raw_data(data, spec.nbytes());
  return t;
}

}  // namespace etc::onnx_import
