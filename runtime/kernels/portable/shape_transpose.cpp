// Transpose and the block reorders depth_to_space / space_to_depth, which are
// transposes of a 6-D view of the input.
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

// Plan that writes the input viewed as `view` (row-major) permuted by `perm`.
CopyPlan permute_plan(const std::vector<int64_t>& view, const std::vector<int64_t>& perm, size_t elem_size) {
  std::vector<int64_t> in_strides(view.size());
  int64_t acc = 1;
  for (size_t d = view.size(); d-- > 0;) {
    in_strides[d] = acc;
    acc *= view[d];
  }
  std::vector<int64_t> dims(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = view[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  return make_copy_plan(dims, strides, 0, elem_size);
}

struct BlockParams {
  int64_t block = 0;
  bool crd = false;
};

Result<BlockParams> block_params(const AttrList& attrs, const TensorSpec& in, bool with_mode) {
  BlockParams p;
  ETC_ASSIGN_OR_RETURN(p.block, attrs.get_int("blocksize"));
  ETC_CHECK_OR_FAIL(p.block >= 1, Error::InvalidArgument, "blocksize must be positive, got ",
                    std::to_string(p.block));
  ETC_CHECK_OR_FAIL(in.shape.rank() == 4, Error::InvalidShape, "expects a 4-D input, got ", in.shape.str());
  if (with_mode) {
    ETC_ASSIGN_OR_RETURN(std::string_view mode, attrs.get_string("mode", "DCR"));
    ETC_CHECK_OR_FAIL(mode == "DCR" || mode == "CRD", Error::InvalidArgument,
                      "mode must be DCR or CRD, got '", std::string(mode), "'");
    p.crd = mode == "CRD";
  }
  return p;
}

}  // namespace

Status infer_transpose(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.get_ints("perm"));
  const Shape& s = in[0].shape;
  ETC_CHECK_OR_FAIL(static_cast<int>(perm.size()) == s.rank(), Error::InvalidArgument, "perm has ",
                    std::to_string(perm.size()), " entries for rank ", std::to_string(s.rank()));
  std::vector<bool> seen(perm.size(), false);
  Shape shape;
  for (int64_t p : perm) {
    ETC_CHECK_OR_FAIL(p >= 0 && p < s.rank() && !seen[p], Error::InvalidArgument,
                      "perm is not a permutation of 0..", std::to_string(s.rank() - 1));
    seen[p] = true;
    shape.push_back(s[static_cast<int>(p)]);
  }
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_transpose(const AttrList& attrs, Span<const TensorSpec> in,
                                                 Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.get_ints("perm"));
  const Shape& s = in[0].shape;
  return make_copy_kernel(permute_plan({s.begin(), s.end()}, perm, dtype_size(in[0].dtype)));
}

Status infer_depth_to_space(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(BlockParams p, block_params(attrs, in[0], true));
  const Shape& s = in[0].shape;
  ETC_CHECK_OR_FAIL(s[1] % (p.block * p.block) == 0, Error::InvalidShape, "channels ", std::to_string(s[1]),
                    " are not divisible by blocksize^2");
  out[0] = TensorSpec{in[0].dtype, Shape{s[0], s[1] / (p.block * p.block), s[2] * p.block, s[3] * p.block}};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_depth_to_space(const AttrList& attrs, Span<const TensorSpec> in,
                                                      Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(BlockParams p, block_params(attrs, in[0], true));
  const Shape& s = in[0].shape;
  const int64_t b = p.block, c = s[1] / (b * b);
  // DCR: channels are (b1, b2, c); CRD: (c, b1, b2). Output [N, c, H, b1, W, b2].
  if (p.crd)
    return make_copy_kernel(
        permute_plan({s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, dtype_size(in[0].dtype)));
  return make_copy_kernel(
      permute_plan({s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, dtype_size(in[0].dtype)));
}

Status infer_space_to_depth(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(BlockParams p, block_params(attrs, in[0], false));
  const Shape& s = in[0].shape;
  ETC_CHECK_OR_FAIL(s[2] % p.block == 0 && s[3] % p.block == 0, Error::InvalidShape, "spatial dims of ",
                    s.str(), " are not divisible by blocksize ", std::to_string(p.block));
  out[0] = TensorSpec{in[0].dtype, Shape{s[0], s[1] * p.block * p.block, s[2] / p.block, s[3] / p.block}};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_space_to_depth(const AttrList& attrs, Span<const TensorSpec> in,
                                                      Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(BlockParams p, block_params(attrs, in[0], false));
  const Shape& s = in[0].shape;
  const int64_t b = p.block;
  // Input viewed as [N, C, H/b, b1, W/b, b2]; output channels are (b1, b2, C).
  return make_copy_kernel(
      permute_plan({s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4}, dtype_size(in[0].dtype)));
}

}  // namespace etc::shape_ops
