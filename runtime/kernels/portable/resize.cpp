// Portable kernels of the 'resize' family: N-d nearest / n-linear / cubic
// resampling with the ONNX coordinate transforms. With the output shape and
// scales in the attributes, create() turns them into per-axis taps
// (resize_plan.h) and run() only gathers and blends; nodes whose scales,
// sizes or roi arrive as inputs run through resize_runtime.cpp.
#include <cmath>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/resize_kernel.h"

namespace etc {
namespace {

Result<ResizeConfig> parse_config(const AttrList& attrs, const Shape& in) {
  const int rank = in.rank();
  ResizeConfig c;
  ETC_ASSIGN_OR_RETURN(std::string_view mode, attrs.get_string("mode", "nearest"));
  ETC_ASSIGN_OR_RETURN(c.mode, parse_resize_mode(mode));
  ETC_ASSIGN_OR_RETURN(std::string_view coord,
                       attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  ETC_ASSIGN_OR_RETURN(c.coord, parse_resize_coord_mode(coord));
  ETC_ASSIGN_OR_RETURN(std::string_view nearest, attrs.get_string("nearest_mode", "round_prefer_floor"));
  ETC_ASSIGN_OR_RETURN(c.nearest, parse_resize_nearest_mode(nearest));
  ETC_ASSIGN_OR_RETURN(c.cubic_coeff_a, attrs.get_float("cubic_coeff_a", -0.75f));
  ETC_ASSIGN_OR_RETURN(int64_t exclude, attrs.get_int("exclude_outside", 0));
  c.exclude_outside = exclude != 0;
  ETC_ASSIGN_OR_RETURN(c.extrapolation_value, attrs.get_float("extrapolation_value", 0.0f));
  ETC_ASSIGN_OR_RETURN(c.sizes, attrs.get_ints("sizes"));
  if (attrs.has("scales")) {
    ETC_ASSIGN_OR_RETURN(c.scales, attrs.get_floats("scales"));
  }
  if (attrs.has("roi")) {
    ETC_ASSIGN_OR_RETURN(c.roi, attrs.get_floats("roi"));
  }

  const auto r = static_cast<size_t>(rank);
  ETC_CHECK_OR_FAIL(c.sizes.size() == r, Error::InvalidProgram, "sizes has ", std::to_string(c.sizes.size()),
                    " values for rank ", std::to_string(rank));
  for (int64_t s : c.sizes) ETC_CHECK_OR_FAIL(s >= 0, Error::InvalidProgram, "negative output size");
  ETC_CHECK_OR_FAIL(c.scales.empty() || c.scales.size() == r, Error::InvalidProgram, "scales has ",
                    std::to_string(c.scales.size()), " values for rank ", std::to_string(rank));
  for (float s : c.scales)
    ETC_CHECK_OR_FAIL(s > 0.0f && std::isfinite(s), Error::InvalidProgram, "scales must be positive");
  ETC_CHECK_OR_FAIL(c.roi.empty() || c.roi.size() == 2 * r, Error::InvalidProgram, "roi has ",
                    std::to_string(c.roi.size()), " values, expected ", std::to_string(2 * r));
  // The output follows the input, floor(in * scale), whatever sizes holds
  // (the compiled size): the program then runs at any input size.
  ETC_ASSIGN_OR_RETURN(int64_t follow, attrs.get_int("sizes_from_scales", 0));
  if (follow != 0) {
    ETC_CHECK_OR_FAIL(c.scales.size() == r && c.roi.empty(), Error::InvalidProgram,
                      "sizes_from_scales needs scales and no roi");
    for (size_t a = 0; a < r; ++a)
      c.sizes[a] = static_cast<int64_t>(
          std::floor(static_cast<double>(in[static_cast<int>(a)]) * static_cast<double>(c.scales[a])));
  }
  return c;
}

// A plan built once at init; the kernel owns the arrays the views point to.
template <typename T, typename Acc, bool kNearest>
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const ResizeConfig& c, const Shape& in, const Shape& out, T extrapolation_value)
      : out_(out), extrapolation_value_(extrapolation_value) {
    const int rank = in.rank();
    int64_t stride = 1;
    for (int a = rank - 1; a >= 0; --a) {
      const ResizeAxisParams p = resize_axis_params(c, in, a);
      const auto n = static_cast<size_t>(p.out_len);
      Storage& st = storage_[a];
      st.off.assign(n * kMaxResizeTaps, 0);
      st.w.assign(n * kMaxResizeTaps, Acc(0));
      st.count.assign(n, 0);
      st.extrapolate.assign(n, 0);
      int max_count = 1;
      if (p.in_len > 0)
        max_count = fill_axis_plan<Acc>(p, stride, st.off.data(), st.w.data(), st.count.data(),
                                        st.extrapolate.data());
      views_[a] = {st.off.data(), st.w.data(), st.count.data(), st.extrapolate.data()};
      if (a + 1 < rank) max_combos_ *= max_count;
      stride *= in[a];
    }
  }

  size_t scratch_bytes() const override {
    return static_cast<size_t>(max_combos_) * (sizeof(int64_t) + sizeof(Acc));
  }

  Status run(const KernelArgs& args) override {
    auto* offs = static_cast<int64_t*>(args.scratch);
    resize_blend<T, Acc, kNearest>(views_, out_, args.inputs[0]->data_as<const T>(),
                                   args.outputs[0]->data_as<T>(), extrapolation_value_, offs,
                                   reinterpret_cast<Acc*>(offs + max_combos_));
    return Status::Ok();
  }

 private:
  struct Storage {
    std::vector<int64_t> off;
    std::vector<Acc> w;
    std::vector<uint8_t> count;
    std::vector<uint8_t> extrapolate;
  };

  Shape out_;
  T extrapolation_value_;
  Storage storage_[kMaxRank];
  AxisPlanView<Acc> views_[kMaxRank];
  int64_t max_combos_ = 1;
};

bool blendable(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int8 || t == DType::UInt8 ||
         t == DType::Int32 || t == DType::Int64;
}

bool present(Span<const TensorSpec> in, int i) {
  return static_cast<int>(in.size()) > i && in[i].dtype != DType::Invalid;
}

// A run-time argument input: one dimension of `numel` values of an allowed dtype.
Status check_argument(Span<const TensorSpec> in, int i, const char* name, DType a, DType b, int64_t numel) {
  if (!present(in, i)) return Status::Ok();
  const TensorSpec& s = in[i];
  ETC_CHECK_OR_FAIL((s.dtype == a || s.dtype == b) && s.shape.rank() == 1 && s.shape[0] == numel,
                    Error::InvalidType, name, " input must be ", dtype_name(a), " [", std::to_string(numel),
                    "], got ", dtype_name(s.dtype), " ", s.shape.str());
  return Status::Ok();
}

Status check_arguments(Span<const TensorSpec> in, const ResizeConfig& c, int rank) {
  ETC_TRY(check_argument(in, kResizeScalesInput, "scales", DType::Float32, DType::Float32, rank));
  ETC_TRY(check_argument(in, kResizeSizesInput, "sizes", DType::Int64, DType::Int64, rank));
  ETC_TRY(check_argument(in, kResizeRoiInput, "roi", DType::Float32, DType::Float64, 2 * int64_t{rank}));
  ETC_CHECK_OR_FAIL(!present(in, kResizeScalesInput) || !present(in, kResizeSizesInput),
                    Error::InvalidProgram, "scales and sizes inputs are both given");
  ETC_CHECK_OR_FAIL(!present(in, kResizeRoiInput) || c.coord == ResizeCoordMode::TfCropAndResize,
                    Error::InvalidProgram, "a roi input needs tf_crop_and_resize");
  return Status::Ok();
}

// The output shape is always the sizes attribute; run-time scales, sizes or
// roi inputs must agree with it, which their kernel checks on every run.
Status infer_resize(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const TensorSpec& x = in[0];
  ETC_CHECK_OR_FAIL(x.shape.rank() >= 1, Error::InvalidShape, "input must have rank >= 1");
  ETC_ASSIGN_OR_RETURN(ResizeConfig c, parse_config(attrs, x.shape));
  ETC_TRY(check_arguments(in, c, x.shape.rank()));
  if (c.mode == ResizeMode::Nearest) {
    ETC_CHECK_OR_FAIL(dtype_size(x.dtype) > 0, Error::InvalidType, "invalid input dtype");
  } else {
    ETC_CHECK_OR_FAIL(blendable(x.dtype), Error::InvalidType, "linear/cubic modes do not take ",
                      dtype_name(x.dtype));
  }
  Shape shape;
  for (int a = 0; a < x.shape.rank(); ++a) {
    const int64_t o = c.sizes[static_cast<size_t>(a)];
    ETC_CHECK_OR_FAIL(x.shape[a] > 0 || o == 0, Error::InvalidShape, "axis ", std::to_string(a),
                      " is empty in the input but not in the output");
    shape.push_back(o);
  }
  out[0] = TensorSpec{x.dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_resize(const AttrList& attrs, Span<const TensorSpec> in,
                                              Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(ResizeConfig c, parse_config(attrs, in[0].shape));
  for (int i = 1; i < static_cast<int>(in.size()); ++i)
    if (present(in, i)) return create_runtime_resize(c, in[0], out[0]);
  return make_resize_kernel<ResizeKernel>(c, in[0], out[0]);
}

}  // namespace

ResizeAxisParams resize_axis_params(const ResizeConfig& c, const Shape& in, int axis) {
  ResizeAxisParams p;
  static_cast<ResizeSampling&>(p) = c;
  p.in_len = in[axis];
  p.out_len = c.sizes[static_cast<size_t>(axis)];
  p.scale = c.scales.empty() ? 0.0 : static_cast<double>(c.scales[static_cast<size_t>(axis)]);
  if (!c.roi.empty()) {
    p.roi_start = c.roi[static_cast<size_t>(axis)];
    p.roi_end = c.roi[static_cast<size_t>(axis) + c.sizes.size()];
  }
  return p;
}

const OpDef* resize_op_def(EdgeOp op) {
  static const OpDef kResize{EdgeOp::Resize, 1, 4, 1, 1, infer_resize, create_resize};
  return op == EdgeOp::Resize ? &kResize : nullptr;
}

}  // namespace etc
