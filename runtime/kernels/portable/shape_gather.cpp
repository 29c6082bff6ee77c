// Gather along one axis with int32 or int64 indices (negative ones count from
// the end). Indices may be a runtime tensor, so run() checks every index
// before it copies anything.
#include <cstring>
#include <string>

#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

class GatherKernel final : public Kernel {
 public:
  GatherKernel(int64_t outer, int64_t axis_dim, size_t block_bytes, DType index_dtype)
      : outer_(outer), axis_dim_(axis_dim), block_(block_bytes), index_dtype_(index_dtype) {}

  Status run(const KernelArgs& args) override {
    if (index_dtype_ == DType::Int32) return run_typed<int32_t>(args);
    return run_typed<int64_t>(args);
  }

 private:
  template <typename I>
  Status run_typed(const KernelArgs& args) {
    const Tensor& idx = *args.inputs[1];
    const I* indices = idx.data_as<const I>();
    const int64_t n = idx.numel();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = indices[j];
      ETC_CHECK_OR_FAIL(i >= -axis_dim_ && i < axis_dim_, Error::OutOfRange, "gather: index ",
                        std::to_string(i), " is out of range for a dim of ", std::to_string(axis_dim_));
    }
    const auto* src = static_cast<const uint8_t*>(args.inputs[0]->data);
    auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
    // Gathering single elements (axis last) is common: fixed-size copies there.
    switch (block_) {
      case 0: break;
      case 1: copy_blocks<1>(src, indices, n, dst); break;
      case 2: copy_blocks<2>(src, indices, n, dst); break;
      case 4: copy_blocks<4>(src, indices, n, dst); break;
      case 8: copy_blocks<8>(src, indices, n, dst); break;
      default: copy_blocks<0>(src, indices, n, dst); break;
    }
    return Status::Ok();
  }

  // N: block size in bytes known at compile time, or 0 for block_.
  template <size_t N, typename I>
  void copy_blocks(const uint8_t* src, const I* indices, int64_t n, uint8_t* dst) const {
    const size_t block = N ? N : block_;
    for (int64_t o = 0; o < outer_; ++o) {
      const uint8_t* slab = src + static_cast<size_t>(o * axis_dim_) * block;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = indices[j] < 0 ? indices[j] + axis_dim_ : indices[j];
        std::memcpy(dst, slab + static_cast<size_t>(i) * block, block);
        dst += block;
      }
    }
  }

  int64_t outer_;
  int64_t axis_dim_;
  size_t block_;
  DType index_dtype_;
};

}  // namespace

Status infer_gather(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  const Shape& data = in[0].shape;
  const Shape& indices = in[1].shape;
  ETC_CHECK_OR_FAIL(in[1].dtype == DType::Int32 || in[1].dtype == DType::Int64, Error::InvalidType,
                    "indices must be int32 or int64, got ", dtype_name(in[1].dtype));
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < data.rank(), Error::InvalidArgument, "axis ", std::to_string(axis),
                    " is out of range for rank ", std::to_string(data.rank()));
  ETC_CHECK_OR_FAIL(data.rank() - 1 + indices.rank() <= kMaxRank, Error::InvalidShape,
                    "output rank is above the maximum of 8");
  Shape shape;
  for (int d = 0; d < axis; ++d) shape.push_back(data[d]);
  for (int64_t d : indices) shape.push_back(d);
  for (int d = static_cast<int>(axis) + 1; d < data.rank(); ++d) shape.push_back(data[d]);
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_gather(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  const Shape& data = in[0].shape;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= data[d];
  for (int d = static_cast<int>(axis) + 1; d < data.rank(); ++d) inner *= data[d];
  return std::unique_ptr<Kernel>(
      std::make_unique<GatherKernel>(outer, data[static_cast<int>(axis)],
                                     static_cast<size_t>(inner) * dtype_size(in[0].dtype), in[1].dtype));
}

}  // namespace etc::shape_ops
