// Portable kernels of the 'shape' family (see runtime/kernels/edge_ops.def):
// pure data movement, so every kernel works on bytes and takes every dtype.
// This file holds concat and split and the family's OpDef table; reshape
// lives in shape_reshape.cpp, the strided-copy ops in shape_transpose.cpp and
// shape_slice.cpp, gather in shape_gather.cpp, pad in shape_pad.cpp and range
// in shape_range.cpp. Run-time shape arguments: see shape_args.h.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/portable/shape_args.h"
#include "runtime/kernels/portable/shape_ops.h"

namespace etc {
namespace shape_ops {

Status check_dims(Span<const int64_t> dims, const char* what) {
  ETC_CHECK_OR_FAIL(dims.size() <= static_cast<size_t>(kMaxRank), Error::InvalidShape, what, " has rank ",
                    std::to_string(dims.size()), ", above the maximum of 8");
  for (int64_t d : dims)
    ETC_CHECK_OR_FAIL(d >= 0, Error::InvalidShape, what, " has a negative dim ", std::to_string(d));
  return Status::Ok();
}

}  // namespace shape_ops

namespace {

using namespace shape_ops;

// Concat and split move, per outer index (dims before the axis), one
// contiguous block per piece; `block_bytes[k]` is piece k's block.
struct AxisBlocks {
  int64_t outer = 1;
  std::vector<size_t> block_bytes;
};

AxisBlocks axis_blocks(const Shape& whole, int64_t axis, Span<const TensorSpec> pieces) {
  AxisBlocks b;
  for (int64_t d = 0; d < axis; ++d) b.outer *= whole[static_cast<int>(d)];
  for (const TensorSpec& p : pieces) {
    int64_t inner = 1;
    for (int d = static_cast<int>(axis); d < p.shape.rank(); ++d) inner *= p.shape[d];
    b.block_bytes.push_back(static_cast<size_t>(inner) * dtype_size(p.dtype));
  }
  return b;
}

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(AxisBlocks blocks) : b_(std::move(blocks)) {}
  Status run(const KernelArgs& args) override {
    auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
    for (int64_t o = 0; o < b_.outer; ++o) {
      for (size_t k = 0; k < b_.block_bytes.size(); ++k) {
        const size_t n = b_.block_bytes[k];
        if (n == 0) continue;
        std::memcpy(dst, static_cast<const uint8_t*>(args.inputs[k]->data) + o * n, n);
        dst += n;
      }
    }
    return Status::Ok();
  }

 private:
  AxisBlocks b_;
};

// Split sizes given at run time (input 1) must be the declared ones.
class SplitKernel final : public Kernel {
 public:
  SplitKernel(AxisBlocks blocks, bool checked, std::vector<int64_t> sizes, Shape first_out)
      : b_(std::move(blocks)), checked_(checked), sizes_(std::move(sizes)), first_out_(first_out) {}
  Status run(const KernelArgs& args) override {
    if (checked_) ETC_TRY(check(*args.inputs[1]));
    const auto* src = static_cast<const uint8_t*>(args.inputs[0]->data);
    for (int64_t o = 0; o < b_.outer; ++o) {
      for (size_t k = 0; k < b_.block_bytes.size(); ++k) {
        const size_t n = b_.block_bytes[k];
        if (n == 0) continue;
        std::memcpy(static_cast<uint8_t*>(args.outputs[k]->data) + o * n, src, n);
        src += n;
      }
    }
    return Status::Ok();
  }

 private:
  Status check(const Tensor& split) const {
    bool same = split.numel() == static_cast<int64_t>(sizes_.size());
    for (size_t k = 0; same && k < sizes_.size(); ++k)
      same = int_at(split, static_cast<int64_t>(k)) == sizes_[k];
    if (same) return Status::Ok();
    std::string want = "[";
    for (size_t k = 0; k < sizes_.size(); ++k) want += (k ? ", " : "") + std::to_string(sizes_[k]);
    return arg_mismatch("split", "split", split, "differs from the declared sizes " + want + "]", first_out_);
  }

  AxisBlocks b_;
  bool checked_;
  std::vector<int64_t> sizes_;
  Shape first_out_;
};

Status infer_concat(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  const TensorSpec& first = in[0];
  const int rank = first.shape.rank();
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < rank, Error::InvalidArgument, "axis ", std::to_string(axis),
                    " is out of range for rank ", std::to_string(rank));
  Shape shape = first.shape;
  shape[static_cast<int>(axis)] = 0;
  for (const TensorSpec& s : in) {
    ETC_CHECK_OR_FAIL(s.dtype == first.dtype, Error::InvalidType, "input dtypes differ (",
                      dtype_name(first.dtype), " vs ", dtype_name(s.dtype), ")");
    bool same = s.shape.rank() == rank;
    for (int d = 0; same && d < rank; ++d) same = d == axis || s.shape[d] == first.shape[d];
    ETC_CHECK_OR_FAIL(same, Error::InvalidShape, "cannot concatenate ", first.shape.str(), " and ",
                      s.shape.str(), " on axis ", std::to_string(axis));
    shape[static_cast<int>(axis)] += s.shape[static_cast<int>(axis)];
  }
  out[0] = TensorSpec{first.dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_concat(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  return std::unique_ptr<Kernel>(std::make_unique<ConcatKernel>(axis_blocks(out[0].shape, axis, in)));
}

Status infer_split(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, attrs.get_ints("sizes"));
  const Shape& shape = in[0].shape;
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < shape.rank(), Error::InvalidArgument, "axis ", std::to_string(axis),
                    " is out of range for rank ", std::to_string(shape.rank()));
  ETC_CHECK_OR_FAIL(sizes.size() == out.size(), Error::InvalidArgument, "sizes has ",
                    std::to_string(sizes.size()), " entries for ", std::to_string(out.size()), " outputs");
  int64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    ETC_CHECK_OR_FAIL(sizes[k] >= 0, Error::InvalidArgument, "negative split size");
    total += sizes[k];
    Shape s = shape;
    s[static_cast<int>(axis)] = sizes[k];
    out[k] = TensorSpec{in[0].dtype, s};
  }
  if (has_arg(in, 1)) ETC_TRY(check_int_arg(in[1], "split"));
  ETC_CHECK_OR_FAIL(total == shape[static_cast<int>(axis)], Error::InvalidShape, "split sizes sum to ",
                    std::to_string(total), " but axis ", std::to_string(axis), " of ", shape.str(), " has ",
                    std::to_string(shape[static_cast<int>(axis)]));
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_split(const AttrList& attrs, Span<const TensorSpec> in,
                                             Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, attrs.get_ints("sizes"));
  return std::unique_ptr<Kernel>(std::make_unique<SplitKernel>(axis_blocks(in[0].shape, axis, out),
                                                               has_arg(in, 1), sizes, out[0].shape));
}

constexpr int kMany = std::numeric_limits<int>::max();

}  // namespace

const OpDef* shape_op_def(EdgeOp op) {
  static const OpDef kDefs[] = {
      {EdgeOp::Reshape, 1, 2, 1, 1, infer_reshape, create_reshape},
      {EdgeOp::Transpose, 1, 1, 1, 1, infer_transpose, create_transpose},
      {EdgeOp::Concat, 1, kMany, 1, 1, infer_concat, create_concat},
      {EdgeOp::Split, 1, 2, 1, kMany, infer_split, create_split},
      {EdgeOp::Slice, 1, 5, 1, 1, infer_slice, create_slice},
      {EdgeOp::Gather, 2, 2, 1, 1, infer_gather, create_gather},
      {EdgeOp::Expand, 1, 2, 1, 1, infer_expand, create_expand},
      {EdgeOp::Tile, 1, 2, 1, 1, infer_tile, create_tile},
      {EdgeOp::Pad, 1, 3, 1, 1, infer_pad, create_pad},
      {EdgeOp::Range, 3, 3, 1, 1, infer_range, create_range},
      {EdgeOp::DepthToSpace, 1, 1, 1, 1, infer_depth_to_space, create_depth_to_space},
      {EdgeOp::SpaceToDepth, 1, 1, 1, 1, infer_space_to_depth, create_space_to_depth},
  };
  for (const OpDef& d : kDefs)
    if (d.op == op) return &d;
  return nullptr;
}

}  // namespace etc
