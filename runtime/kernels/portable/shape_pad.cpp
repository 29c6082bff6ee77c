// Pad with modes constant, reflect and edge. Pads may be negative (crop).
// Each output row (innermost dim) is one memcpy of the overlapping input run
// plus per-element fill of the padded ends. Pads (input 1) and the fill value
// (input 2) may be given at run time; pads must then give the declared shape.
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/shape_args.h"
#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

enum class PadMode { Constant, Reflect, Edge };

struct PadAttrs {
  std::vector<int64_t> pads;  // begins..., ends...
  PadMode mode = PadMode::Constant;
  float value = 0.0f;
};

// Without pads (run-time pads) a.pads is all zeros.
Result<PadAttrs> pad_attrs(const AttrList& attrs, int rank, bool runtime_pads) {
  PadAttrs a;
  if (runtime_pads) {
    a.pads.assign(static_cast<size_t>(2 * rank), 0);
  } else {
    ETC_ASSIGN_OR_RETURN(a.pads, attrs.get_ints("pads"));
  }
  ETC_ASSIGN_OR_RETURN(std::string_view mode, attrs.get_string("mode", "constant"));
  ETC_ASSIGN_OR_RETURN(a.value, attrs.get_float("value", 0.0f));
  ETC_CHECK_OR_FAIL(a.pads.size() == static_cast<size_t>(2 * rank), Error::InvalidArgument, "pads has ",
                    std::to_string(a.pads.size()), " entries for rank ", std::to_string(rank));
  if (mode == "reflect")
    a.mode = PadMode::Reflect;
  else if (mode == "edge")
    a.mode = PadMode::Edge;
  else
    ETC_CHECK_OR_FAIL(mode == "constant", Error::InvalidArgument, "unknown pad mode '", std::string(mode),
                      "'");
  return a;
}

// Input index feeding output position i - begin along a dim of n, or -1 for the fill value.
int64_t pad_source(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::Constant) return -1;
  if (mode == PadMode::Edge || n == 1) return i < 0 ? 0 : n - 1;
  const int64_t period = 2 * (n - 1);  // numpy 'reflect': mirror without repeating the edge
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

class PadKernel final : public Kernel {
 public:
  PadKernel(const PadAttrs& a, const Shape& in, const Shape& out, size_t elem_size, const uint8_t* fill,
            bool runtime_pads, bool runtime_value)
      : mode_(a.mode),
        in_(in),
        out_(out),
        es_(elem_size),
        in_strides_(strides_of(in)),
        runtime_pads_(runtime_pads),
        runtime_value_(runtime_value) {
    for (int d = 0; d < in.rank(); ++d) begin_[d] = a.pads[d];
    std::memcpy(fill_, fill, es_);
  }

  Status run(const KernelArgs& args) override {
    const int64_t* begin = begin_.data();
    std::array<int64_t, kMaxRank> run_begin{};
    if (runtime_pads_) {
      ETC_TRY(read_pads(*args.inputs[1], &run_begin));
      begin = run_begin.data();
    }
    const uint8_t* fill = runtime_value_ ? static_cast<const uint8_t*>(args.inputs[2]->data) : fill_;
    pad(begin, fill, static_cast<const uint8_t*>(args.inputs[0]->data),
        static_cast<uint8_t*>(args.outputs[0]->data));
    return Status::Ok();
  }

 private:
  // Checks run-time pads give the declared shape and keeps their begins.
  Status read_pads(const Tensor& pads, std::array<int64_t, kMaxRank>* begin) const {
    const int r = in_.rank();
    if (pads.numel() != 2 * r)
      return arg_mismatch("pad", "pads", pads, "do not hold 2 entries per dim of input " + in_.str(), out_);
    for (int d = 0; d < r; ++d) {
      const int64_t b = int_at(pads, d), e = int_at(pads, d + r);
      // Bounding each pad first keeps the sum exact.
      const bool fits =
          b >= -in_[d] && b <= out_[d] && e >= -in_[d] && e <= out_[d] && in_[d] + b + e == out_[d];
      if (!fits) return arg_mismatch("pad", "pads", pads, "do not pad input " + in_.str() + " to it", out_);
      if (mode_ != PadMode::Constant && in_[d] == 0 && (b != 0 || e != 0))
        return arg_mismatch("pad", "pads", pads,
                            "pad an empty dim of " + in_.str() + " in reflect or edge mode", out_);
      (*begin)[d] = b;
    }
    return Status::Ok();
  }

  void pad(const int64_t* begin, const uint8_t* fill, const uint8_t* src, uint8_t* dst) const {
    const int r = out_.rank();
    if (out_.numel() == 0) return;
    if (r == 0) {
      std::memcpy(dst, src, es_);
      return;
    }
    const int64_t width = out_[r - 1];
    std::array<int64_t, kMaxRank> counter{};
    for (int64_t o = 0; o < out_.numel(); o += width) {
      // Locate the input row feeding this output row (or none: fill).
      int64_t row = 0;
      bool fill_row = false;
      for (int d = 0; d < r - 1; ++d) {
        const int64_t s = pad_source(counter[d] - begin[d], in_[d], mode_);
        if (s < 0) fill_row = true;
        row += s * in_strides_[d];
      }
      write_row(fill_row ? nullptr : src + row * static_cast<int64_t>(es_), begin[r - 1], fill, dst);
      dst += width * static_cast<int64_t>(es_);
      for (int d = r - 2; d >= 0; --d) {
        if (++counter[d] < out_[d]) break;
        counter[d] = 0;
      }
    }
  }

  // One output row from input row `row` (null: all fill) with begin pad b.
  void write_row(const uint8_t* row, int64_t b, const uint8_t* fill, uint8_t* dst) const {
    const int r = out_.rank();
    const int64_t width = out_[r - 1], n = in_[r - 1];
    // Output positions [lo, hi) copy input [lo - b, hi - b) in one run.
    const int64_t lo = row ? std::max<int64_t>(0, b) : width;
    const int64_t hi = row ? std::min<int64_t>(width, n + b) : width;
    if (hi > lo) std::memcpy(dst + lo * es_, row + (lo - b) * es_, (hi - lo) * es_);
    for (int64_t j = 0; j < width; ++j) {
      if (j == lo && hi > lo) j = hi;
      if (j >= width) break;
      const int64_t s = row ? pad_source(j - b, n, mode_) : -1;
      std::memcpy(dst + j * es_, s < 0 ? fill : row + s * es_, es_);
    }
  }

  PadMode mode_;
  Shape in_, out_;
  size_t es_;
  std::array<int64_t, kMaxRank> in_strides_;
  std::array<int64_t, kMaxRank> begin_{};
  uint8_t fill_[8] = {};
  bool runtime_pads_;
  bool runtime_value_;
};

// Types pad with run-time pads: the output shape is the `shape` attribute.
Status infer_pad_args(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_int_arg(in[1], "pads"));
  return output_from_shape_attr(attrs, in, out);
}

}  // namespace

Status infer_pad(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(PadAttrs a, pad_attrs(attrs, s.rank(), has_arg(in, 1)));
  if (has_arg(in, 2))
    ETC_CHECK_OR_FAIL(in[2].dtype == in[0].dtype && in[2].shape.numel() == 1 && in[2].shape.rank() <= 1,
                      Error::InvalidArgument, "value must be one ", dtype_name(in[0].dtype), " element, got ",
                      dtype_name(in[2].dtype), " ", in[2].shape.str());
  if (has_arg(in, 1)) return infer_pad_args(attrs, in, out);
  Shape shape;
  for (int d = 0; d < s.rank(); ++d) {
    const int64_t n = s[d] + a.pads[d] + a.pads[d + s.rank()];
    ETC_CHECK_OR_FAIL(n >= 0, Error::InvalidShape, "pads make dim ", std::to_string(d), " of ", s.str(),
                      " negative");
    ETC_CHECK_OR_FAIL(a.mode == PadMode::Constant || s[d] > 0 || n == 0, Error::InvalidShape,
                      "cannot reflect or extend an empty dim");
    shape.push_back(n);
  }
  out[0] = TensorSpec{in[0].dtype, shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_pad(const AttrList& attrs, Span<const TensorSpec> in,
                                           Span<const TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(PadAttrs a, pad_attrs(attrs, in[0].shape.rank(), has_arg(in, 1)));
  uint8_t fill[8] = {};
  ETC_TRY(dispatch_all(in[0].dtype, [&]<typename T>() {
    const T v = static_cast<T>(a.value);
    std::memcpy(fill, &v, sizeof(T));
    return Status::Ok();
  }));
  return std::unique_ptr<Kernel>(std::make_unique<PadKernel>(
      a, in[0].shape, out[0].shape, dtype_size(in[0].dtype), fill, has_arg(in, 1), has_arg(in, 2)));
}

}  // namespace etc::shape_ops
