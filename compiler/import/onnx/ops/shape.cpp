// Lowering of the ONNX data-movement ops whose result is a reshape, a
// transpose or a concat/split: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Expand, Tile, DepthToSpace, SpaceToDepth,
// Identity and Dropout. Slice, Gather and Pad are in shape_slice.cpp.
// Ops that do not move data bind their output to the input value.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "compiler/import/onnx/ops/register_all.h"
#include "compiler/import/onnx/ops/shape_lowerings.h"

namespace etc::onnx_import {

ir::ValueId reshape_to(LowerContext& c, ir::ValueId x, const std::vector<int64_t>& dims) {
  const TensorSpec spec = c.spec(x);
  if (dims == dims_of(spec.shape)) return x;
  if (dims.size() > static_cast<size_t>(kMaxRank))
    c.fail("output rank " + std::to_string(dims.size()) + " is above the maximum of 8");
  return c.emit1(EdgeOp::Reshape, {x}, {{"shape", dims}});
}

bool is_runtime_arg(LowerContext& c, int i) { return c.has_input(i) && !c.is_constant(c.input(i)); }

std::vector<int64_t> declared_dims(LowerContext& c, int output, const char* what, int input) {
  const std::optional<TensorSpec> spec = c.declared_output_spec(output);
  if (!spec)
    c.fail(std::string(what) + " (input " + std::to_string(input) +
           ") is computed at run time and the type of output " + std::to_string(output) +
           " is undeclared or not static; it must be a compile-time constant or the model must declare "
           "a static output shape");
  return dims_of(spec->shape);
}

namespace {

// The edge reshape of x to the declared output shape, with the ONNX argument
// `arg` (shape, squeeze_axes or unsqueeze_axes) checked at run time.
ir::ValueId runtime_reshape(LowerContext& c, const char* arg, const char* what, ir::Attrs extra = {}) {
  const std::vector<int64_t> dims = declared_dims(c, 0, what, 1);
  extra.set("shape", dims);
  extra.set("arg", std::string(arg));
  return c.emit1(EdgeOp::Reshape, {c.input(0), c.input(1)}, std::move(extra));
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void lower_reshape(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  const bool allow_zero = c.opset() >= 14 && c.attr_int("allowzero", 0) != 0;
  if (is_runtime_arg(c, 1))
    return c.set_output(0, runtime_reshape(c, "shape", "shape", {{"allowzero", int64_t{allow_zero}}}));
  std::vector<int64_t> dims = c.constant_ints(1, "shape (the output shape depends on it)");
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (static_cast<int>(i) >= in.rank())
        c.fail("shape " + list_str(dims) + " copies dim " + std::to_string(i) + " of rank-" +
               std::to_string(in.rank()) + " input");
      dims[i] = in[static_cast<int>(i)];
    } else if (dims[i] == -1) {
      if (infer >= 0) c.fail("shape " + list_str(dims) + " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    } else if (dims[i] < 0) {
      c.fail("shape " + list_str(dims) + " has a negative dim");
    }
    if (__builtin_mul_overflow(known, dims[i], &known))
      c.fail("shape " + list_str(dims) + " has more elements than int64 can count");
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0)
      c.fail("cannot infer the -1 dim reshaping " + in.str() + " to " + list_str(dims));
    dims[infer] = in.numel() / known;
  } else if (known != in.numel()) {
    c.fail("cannot reshape " + in.str() + " to " + list_str(dims));
  }
  c.set_output(0, reshape_to(c, c.input(0), dims));
}

void lower_flatten(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -in.rank() || axis > in.rank())
    c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.rank()));
  if (axis < 0) axis += in.rank();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < in.rank(); ++d) {
    int64_t& part = d < axis ? outer : inner;
    if (__builtin_mul_overflow(part, in[d], &part))
      c.fail("input " + in.str() + " has more elements than int64 can count");
  }
  c.set_output(0, reshape_to(c, c.input(0), {outer, inner}));
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13.
std::vector<int64_t> axes_of(LowerContext& c, bool* given) {
  *given = true;
  if (c.opset() < 13) {
    *given = c.has_attr("axes");
    return c.attr_ints("axes");
  }
  if (!c.has_input(1)) {
    *given = false;
    return {};
  }
  return c.constant_ints(1, "axes (the output shape depends on them)");
}

void lower_squeeze(LowerContext& c) {
  if (c.opset() >= 13 && is_runtime_arg(c, 1))
    return c.set_output(0, runtime_reshape(c, "squeeze_axes", "axes"));
  const Shape in = c.input_spec(0).shape;
  bool given = false;
  std::vector<int64_t> axes = axes_of(c, &given);
  std::vector<bool> drop(in.rank(), false);
  for (int d = 0; d < in.rank(); ++d) drop[d] = !given && in[d] == 1;
  for (int64_t a : axes) {
    const int64_t d = c.normalize_axis(a, in.rank(), "axes entry");
    if (in[static_cast<int>(d)] != 1)
      c.fail("cannot squeeze dim " + std::to_string(a) + " of " + in.str() + ": it is not 1");
    drop[d] = true;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d)
    if (!drop[d]) dims.push_back(in[d]);
  c.set_output(0, reshape_to(c, c.input(0), dims));
}

void lower_unsqueeze(LowerContext& c) {
  if (c.opset() >= 13 && is_runtime_arg(c, 1))
    return c.set_output(0, runtime_reshape(c, "unsqueeze_axes", "axes"));
  const Shape in = c.input_spec(0).shape;
  bool given = false;
  const std::vector<int64_t> axes = axes_of(c, &given);
  if (!given) c.fail("axes are required");
  const int64_t rank = in.rank() + static_cast<int64_t>(axes.size());
  if (rank > kMaxRank) c.fail("output rank " + std::to_string(rank) + " is above the maximum of 8");
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t d = c.normalize_axis(a, rank, "axes entry");
    if (inserted[d]) c.fail("axes " + list_str(axes) + " repeat an axis");
    inserted[d] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0, k = 0; d < rank; ++d) dims.push_back(inserted[d] ? 1 : in[static_cast<int>(k++)]);
  c.set_output(0, reshape_to(c, c.input(0), dims));
}

void lower_transpose(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  std::vector<int64_t> perm(in.rank());
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  perm = c.attr_ints("perm", perm);
  if (static_cast<int>(perm.size()) != in.rank())
    c.fail("perm " + list_str(perm) + " does not match rank " + std::to_string(in.rank()));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int d = 0; d < in.rank(); ++d)
    if (sorted[d] != d) c.fail("perm " + list_str(perm) + " is not a permutation");
  // When the dims that are not 1 keep their order, the bytes do not move.
  std::vector<int64_t> moved, dims;
  for (int64_t p : perm) {
    if (in[static_cast<int>(p)] != 1) moved.push_back(p);
    dims.push_back(in[static_cast<int>(p)]);
  }
  if (std::is_sorted(moved.begin(), moved.end())) return c.set_output(0, reshape_to(c, c.input(0), dims));
  c.set_output(0, c.emit1(EdgeOp::Transpose, {c.input(0)}, {{"perm", perm}}));
}

void lower_concat(LowerContext& c) {
  const int rank = c.input_spec(0).shape.rank();
  const int64_t axis = c.normalize_axis(c.attr_int("axis"), rank);
  std::vector<ir::ValueId> inputs;
  for (int i = 0; i < c.num_inputs(); ++i) inputs.push_back(c.input(i));
  if (inputs.size() == 1) return c.set_output(0, inputs[0]);
  c.set_output(0, c.emit1(EdgeOp::Concat, inputs, {{"axis", axis}}));
}

// Split with run-time sizes: each output's declared size along the axis.
void lower_runtime_split(LowerContext& c, int64_t axis) {
  const int n = c.num_outputs();
  std::vector<int64_t> sizes;
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t> dims = declared_dims(c, i, "split", 1);
    if (static_cast<int64_t>(dims.size()) <= axis)
      c.fail("declared output " + std::to_string(i) + " lacks the split axis");
    sizes.push_back(dims[axis]);
  }
  const auto outs = c.emit(EdgeOp::Split, {c.input(0), c.input(1)}, {{"axis", axis}, {"sizes", sizes}}, n);
  for (int i = 0; i < n; ++i) c.set_output(i, outs[i]);
}

void lower_split(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  const int64_t axis = c.normalize_axis(c.attr_int("axis", 0), in.rank());
  const int64_t dim = in[static_cast<int>(axis)];
  const int n = c.num_outputs();
  std::vector<int64_t> sizes;
  if (c.opset() >= 13 && is_runtime_arg(c, 1)) return lower_runtime_split(c, axis);
  if (c.opset() < 13)
    sizes = c.attr_ints("split");
  else if (c.has_input(1))
    sizes = c.constant_ints(1, "split (the output shapes depend on it)");
  if (sizes.empty()) {
    if (dim % n != 0)
      c.fail("cannot split a dim of " + std::to_string(dim) + " into " + std::to_string(n) + " equal parts");
    sizes.assign(n, dim / n);
  }
  if (static_cast<int>(sizes.size()) != n)
    c.fail("split " + list_str(sizes) + " does not give one size per output (" + std::to_string(n) + ")");
  if (n == 1) return c.set_output(0, reshape_to(c, c.input(0), dims_of(in)));
  const auto outs = c.emit(EdgeOp::Split, {c.input(0)}, {{"axis", axis}, {"sizes", sizes}}, n);
  for (int i = 0; i < n; ++i) c.set_output(i, outs[i]);
}

void lower_expand(LowerContext& c) {
  if (is_runtime_arg(c, 1)) {
    const std::vector<int64_t> dims = declared_dims(c, 0, "shape", 1);
    return c.set_output(0, c.emit1(EdgeOp::Expand, {c.input(0), c.input(1)}, {{"shape", dims}}));
  }
  const Shape in = c.input_spec(0).shape;
  const std::vector<int64_t> shape = c.constant_ints(1, "shape (the output shape depends on it)");
  // Bidirectional broadcast: either side may hold the 1.
  const size_t rank = std::max<size_t>(shape.size(), in.rank());
  if (rank > static_cast<size_t>(kMaxRank)) c.fail("output rank is above the maximum of 8");
  std::vector<int64_t> dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = d + in.rank() >= rank ? in[static_cast<int>(d + in.rank() - rank)] : 1;
    const int64_t b = d + shape.size() >= rank ? shape[d + shape.size() - rank] : 1;
    if (a != b && a != 1 && b != 1) c.fail("cannot expand " + in.str() + " to " + list_str(shape));
    dims[d] = a == 1 ? b : a;
  }
  if (dims == dims_of(in)) return c.set_output(0, c.input(0));
  c.set_output(0, c.emit1(EdgeOp::Expand, {c.input(0)}, {{"shape", dims}}));
}

// Tile with run-time repeats: the repeats the declared shape implies.
void lower_runtime_tile(LowerContext& c) {
  const Shape in = c.input_spec(0).shape;
  const std::vector<int64_t> dims = declared_dims(c, 0, "repeats", 1);
  if (static_cast<int>(dims.size()) != in.rank())
    c.fail("declared output shape " + list_str(dims) + " does not match input rank " +
           std::to_string(in.rank()));
  std::vector<int64_t> repeats(dims.size(), 1);
  for (int d = 0; d < in.rank(); ++d) {
    if (in[d] == 0) continue;  // any repeat of an empty dim is empty
    if (dims[d] % in[d] != 0)
      c.fail("declared output shape " + list_str(dims) + " is not a tiling of " + in.str());
    repeats[d] = dims[d] / in[d];
  }
  c.set_output(0, c.emit1(EdgeOp::Tile, {c.input(0), c.input(1)}, {{"repeats", repeats}}));
}

void lower_tile(LowerContext& c) {
  if (is_runtime_arg(c, 1)) return lower_runtime_tile(c);
  const Shape in = c.input_spec(0).shape;
  const std::vector<int64_t> repeats = c.constant_ints(1, "repeats (the output shape depends on them)");
  if (static_cast<int>(repeats.size()) != in.rank())
    c.fail("repeats " + list_str(repeats) + " does not match rank " + std::to_string(in.rank()));
  if (std::all_of(repeats.begin(), repeats.end(), [](int64_t r) { return r == 1; }))
    return c.set_output(0, c.input(0));
  c.set_output(0, c.emit1(EdgeOp::Tile, {c.input(0)}, {{"repeats", repeats}}));
}

void lower_depth_to_space(LowerContext& c) {
  const std::string mode = c.opset() >= 11 ? c.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") c.fail("mode '" + mode + "' is not DCR or CRD");
  c.set_output(0, c.emit1(EdgeOp::DepthToSpace, {c.input(0)},
                          {{"blocksize", c.attr_int("blocksize")}, {"mode", mode}}));
}

void lower_space_to_depth(LowerContext& c) {
  c.set_output(0, c.emit1(EdgeOp::SpaceToDepth, {c.input(0)}, {{"blocksize", c.attr_int("blocksize")}}));
}

// Inference-mode Dropout is the identity; its mask keeps every element.
void lower_dropout(LowerContext& c) {
  if (c.opset() >= 12 && c.has_input(2)) {
    if (!c.is_constant(c.input(2)))
      c.fail("training_mode must be a compile-time constant (random dropout is not supported)");
    const bool training = c.constant_int(2, "training_mode") != 0;
    const bool zero_ratio = c.has_input(1) && c.constant_float(1, "ratio") == 0.0f;
    if (training && !zero_ratio) c.fail("training_mode=true (random dropout) is not supported");
  }
  const TensorSpec in = c.input_spec(0);
  c.set_output(0, c.input(0));
  if (c.num_outputs() < 2) return;
  // Before opset 10 the mask has the input's type.
  const DType mask_type = c.opset() < 10 ? in.dtype : DType::Bool;
  c.set_output(1, c.emit1(EdgeOp::Expand, {c.scalar(mask_type, 1.0)}, {{"shape", dims_of(in.shape)}}));
}

}  // namespace

void register_shape_lowerings() {
  register_lowering("Reshape", {lower_reshape, 5});
  register_lowering("Flatten", {lower_flatten, 1});
  register_lowering("Squeeze", {lower_squeeze, 1});
  register_lowering("Unsqueeze", {lower_unsqueeze, 1});
  register_lowering("Transpose", {lower_transpose, 1});
  register_lowering("Concat", {lower_concat, 4});
  register_lowering("Split", {lower_split, 2});
  register_lowering("Expand", {lower_expand, 8});
  register_lowering("Tile", {lower_tile, 6});
  register_lowering("DepthToSpace", {lower_depth_to_space, 1});
  register_lowering("SpaceToDepth", {lower_space_to_depth, 1});
  register_lowering("Identity", {[](LowerContext& c) { c.set_output(0, c.input(0)); }, 1});
  register_lowering("Dropout", {lower_dropout, 7});
  register_shape_slice_lowerings();
}

}  // namespace etc::onnx_import
