// Pad with modes constant, reflect and edge. Pads may be negative (crop).
// Each output row (innermost dim) is one memcpy of the overlapping input run
// plus per-element fill of the padded ends.
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/shape_ops.h"

namespace etc::shape_ops {
namespace {

enum class PadMode { Constant, Reflect, Edge };

struct PadAttrs {
  std::vector<int64_t> pads;  // begins..., ends...
  PadMode mode = PadMode::Constant;
  float value = 0.0f;
};

Result<PadAttrs> pad_attrs(const AttrList& attrs, int rank) {
  PadAttrs a;
  ETC_ASSIGN_OR_RETURN(a.pads, attrs.get_ints("pads"));
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
  PadKernel(const PadAttrs& a, const Shape& in, const Shape& out, size_t elem_size, const uint8_t* fill)
      : mode_(a.mode), in_(in), out_(out), es_(elem_size), in_strides_(strides_of(in)) {
    for (int d = 0; d < in.rank(); ++d) begin_[d] = a.pads[d];
    std::memcpy(fill_, fill, es_);
  }

  Status run(const KernelArgs& args) override {
    const auto* src = static_cast<const uint8_t*>(args.inputs[0]->data);
    auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
    const int r = out_.rank();
    if (out_.numel() == 0) return Status::Ok();
    if (r == 0) {
      std::memcpy(dst, src, es_);
      return Status::Ok();
    }
    const int64_t width = out_[r - 1];
    std::array<int64_t, kMaxRank> counter{};
    for (int64_t o = 0; o < out_.numel(); o += width) {
      // Locate the input row feeding this output row (or none: fill).
      int64_t row = 0;
      bool fill_row = false;
      for (int d = 0; d < r - 1; ++d) {
        const int64_t s = pad_source(counter[d] - begin_[d], in_[d], mode_);
        if (s < 0) fill_row = true;
        row += s * in_strides_[d];
      }
      write_row(fill_row ? nullptr : src + row * static_cast<int64_t>(es_), dst);
      dst += width * static_cast<int64_t>(es_);
      for (int d = r - 2; d >= 0; --d) {
        if (++counter[d] < out_[d]) break;
        counter[d] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  void write_row(const uint8_t* row, uint8_t* dst) const {
    const int r = out_.rank();
    const int64_t width = out_[r - 1], n = in_[r - 1], b = begin_[r - 1];
    // Output positions [lo, hi) copy input [lo - b, hi - b) in one run.
    const int64_t lo = row ? std::max<int64_t>(0, b) : width;
    const int64_t hi = row ? std::min<int64_t>(width, n + b) : width;
    if (hi > lo) std::memcpy(dst + lo * es_, row + (lo - b) * es_, (hi - lo) * es_);
    for (int64_t j = 0; j < width; ++j) {
      if (j == lo && hi > lo) j = hi;
      if (j >= width) break;
      const int64_t s = row ? pad_source(j - b, n, mode_) : -1;
      std::memcpy(dst + j * es_, s < 0 ? fill_ : row + s * es_, es_);
    }
  }

  PadMode mode_;
  Shape in_, out_;
  size_t es_;
  std::array<int64_t, kMaxRank> in_strides_;
  std::array<int64_t, kMaxRank> begin_{};
  uint8_t fill_[8] = {};
};

}  // namespace

Status infer_pad(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  const Shape& s = in[0].shape;
  ETC_ASSIGN_OR_RETURN(PadAttrs a, pad_attrs(attrs, s.rank()));
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
  ETC_ASSIGN_OR_RETURN(PadAttrs a, pad_attrs(attrs, in[0].shape.rank()));
  uint8_t fill[8] = {};
  ETC_TRY(dispatch_all(in[0].dtype, [&]<typename T>() {
    const T v = static_cast<T>(a.value);
    std::memcpy(fill, &v, sizeof(T));
    return Status::Ok();
  }));
  return std::unique_ptr<Kernel>(
      std::make_unique<PadKernel>(a, in[0].shape, out[0].shape, dtype_size(in[0].dtype), fill));
}

}  // namespace etc::shape_ops
