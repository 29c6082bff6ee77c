// Resize whose scales, sizes or roi are inputs read at run time. The output
// shape stays static (the sizes attribute: the model's declared output type);
// each run checks, with the ONNX rules, that the arguments give that shape and
// builds the per-axis taps in scratch memory whose size the static output
// shape bounds at init.
#include <cmath>
#include <cstdio>
#include <string>

#include "runtime/kernels/portable/resize_kernel.h"

namespace etc {
namespace {

constexpr size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

const Tensor* optional_input(const KernelArgs& args, int i) {
  if (static_cast<int>(args.inputs.size()) <= i || !args.inputs[i]->present()) return nullptr;
  return args.inputs[i];
}

double read_real(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::Float64) return t.data_as<const double>()[i];
  return static_cast<double>(t.data_as<const float>()[i]);
}

std::string join(const int64_t* values, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// The values of a small argument tensor, for error messages.
std::string values_str(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) s += ", ";
    if (t.dtype() == DType::Int64) {
      s += std::to_string(t.data_as<const int64_t>()[i]);
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", read_real(t, i));
      s += buf;
    }
  }
  return s + "]";
}

template <typename T, typename Acc, bool kNearest>
class RuntimeResizeKernel final : public Kernel {
 public:
  RuntimeResizeKernel(const ResizeConfig& c, const Shape& in, const Shape& out, T extrapolation_value)
      : c_(c), in_(in), out_(out), extrapolation_value_(extrapolation_value) {
    const int rank = in.rank();
    const int64_t taps = c.mode == ResizeMode::Nearest ? 1 : c.mode == ResizeMode::Linear ? 2 : 4;
    for (int a = 0; a + 1 < rank; ++a) max_combos_ *= taps;
    size_t bytes = align8(static_cast<size_t>(max_combos_) * (sizeof(int64_t) + sizeof(Acc)));
    int64_t stride = 1;
    for (int a = rank - 1; a >= 0; --a) {
      strides_[a] = stride;
      stride *= in[a];
    }
    for (int a = 0; a < rank; ++a) {
      axis_offset_[a] = bytes;
      const auto n = static_cast<size_t>(out[a]);
      bytes += align8(n * kMaxResizeTaps * (sizeof(int64_t) + sizeof(Acc)) + 2 * n);
    }
    scratch_bytes_ = bytes;
  }

  size_t scratch_bytes() const override { return scratch_bytes_; }

  Status run(const KernelArgs& args) override {
    ResizeAxisParams params[kMaxRank];
    ETC_TRY(resolve(args, params));
    auto* base = static_cast<uint8_t*>(args.scratch);
    AxisPlanView<Acc> views[kMaxRank];
    for (int a = 0; a < in_.rank(); ++a) {
      const auto n = static_cast<size_t>(out_[a]);
      auto* off = reinterpret_cast<int64_t*>(base + axis_offset_[a]);
      auto* w = reinterpret_cast<Acc*>(off + n * kMaxResizeTaps);
      auto* count = reinterpret_cast<uint8_t*>(w + n * kMaxResizeTaps);
      uint8_t* extrapolate = count + n;
      if (in_[a] > 0) fill_axis_plan<Acc>(params[a], strides_[a], off, w, count, extrapolate);
      views[a] = {off, w, count, extrapolate};
    }
    auto* offs = reinterpret_cast<int64_t*>(base);
    resize_blend<T, Acc, kNearest>(views, out_, args.inputs[0]->data_as<const T>(),
                                   args.outputs[0]->data_as<T>(), extrapolation_value_, offs,
                                   reinterpret_cast<Acc*>(offs + max_combos_));
    return Status::Ok();
  }

 private:
  // Per-axis parameters from the run-time arguments, after checking that
  // they give the static output shape: sizes as given, or floor(in * scale)
  // (times the roi extent for tf_crop_and_resize).
  Status resolve(const KernelArgs& args, ResizeAxisParams* params) const {
    const Tensor* scales = optional_input(args, kResizeScalesInput);
    const Tensor* sizes = optional_input(args, kResizeSizesInput);
    const Tensor* roi = optional_input(args, kResizeRoiInput);
    const int rank = in_.rank();
    int64_t got[kMaxRank] = {};
    for (int a = 0; a < rank; ++a) {
      ResizeAxisParams& p = params[a];
      p = resize_axis_params(c_, in_, a);
      if (roi) {
        p.roi_start = read_real(*roi, a);
        p.roi_end = read_real(*roi, a + rank);
      }
      if (sizes) {
        got[a] = sizes->data_as<const int64_t>()[a];
        p.scale = 0.0;  // the transform uses out / in
        continue;
      }
      if (scales) {
        const float s = scales->data_as<const float>()[a];
        ETC_CHECK_OR_FAIL(s > 0.0f && std::isfinite(s), Error::InvalidArgument, "resize: scales[",
                          std::to_string(a), "] = ", std::to_string(s), " is not positive");
        p.scale = static_cast<double>(s);
      }
      got[a] = out_[a];  // sizes attribute, roi only given at run time
      if (p.scale > 0.0) {
        const double extent = c_.coord == ResizeCoordMode::TfCropAndResize ? p.roi_end - p.roi_start : 1.0;
        const double size = std::floor(static_cast<double>(in_[a]) * extent * p.scale);
        // A size no int64 holds (or NaN) can match no compiled shape: -1 shows it.
        got[a] = size >= 0.0 && size < 9.0e18 ? static_cast<int64_t>(size) : -1;
      }
    }
    for (int a = 0; a < rank; ++a) {
      if (got[a] == out_[a]) continue;
      const char* what = sizes ? "sizes" : scales ? "scales" : "roi";
      const std::string value = values_str(sizes ? *sizes : scales ? *scales : *roi);
      return fail(Error::InvalidArgument, "resize: ", what, " ", value, " give output shape ",
                  join(got, rank), " on input ", in_.str(),
                  ", but the program was compiled for the declared output shape ", out_.str());
    }
    return Status::Ok();
  }

  ResizeConfig c_;
  Shape in_;
  Shape out_;
  T extrapolation_value_;
  int64_t strides_[kMaxRank] = {};
  size_t axis_offset_[kMaxRank] = {};
  int64_t max_combos_ = 1;
  size_t scratch_bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> create_runtime_resize(const ResizeConfig& c, const TensorSpec& in,
                                                      const TensorSpec& out) {
  return make_resize_kernel<RuntimeResizeKernel>(c, in, out);
}

}  // namespace etc
