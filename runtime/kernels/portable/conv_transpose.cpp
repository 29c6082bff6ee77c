// The conv_transpose kernel: per batch and group, one GEMM computes every
// (output channel, kernel tap) contribution of every input position
// (col = w^T x), and col2im scatters them onto the output, which holds the
// bias (or zeros) beforehand. Pads may be negative: they then extend the
// output (output_padding is folded into the end pads by the shape function).
#include <algorithm>

#include "runtime/kernels/portable/conv_kernels.h"

namespace etc {
namespace {

template <typename T>
class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const ConvParams& p) : p_(p) {
    in_per_group_ = p.in_channels / p.group;
    out_per_group_ = p.out_channels / p.group;
    rows_ = out_per_group_ * p.g.kernel_size();
  }

  size_t scratch_bytes() const override { return static_cast<size_t>(rows_ * p_.g.in_size()) * sizeof(T); }

  Status run(const KernelArgs& args) override {
    const ConvOperands<T> op = conv_operands<T>(p_, args);
    const int64_t in_size = p_.g.in_size();
    for (int64_t n = 0; n < p_.batch; ++n) {
      T* yn = op.y_image(n);
      if (op.bias) {
        fill_bias(op.bias, p_.out_channels, p_.g.out_size(), yn);
      } else {
        std::fill(yn, yn + op.y_image_size, T(0));
      }
      for (int64_t grp = 0; grp < p_.group; ++grp) {
        // w of this group is [in_per_group, rows] row-major; the GEMM reads it transposed.
        gemm_typed(true, false, rows_, in_size, in_per_group_, op.w + grp * in_per_group_ * rows_, rows_,
                   op.x_group(n, grp), in_size, T(0), op.col, in_size);
        col2im(p_.g, op.col, out_per_group_, op.y_group(n, grp));
      }
    }
    return Status::Ok();
  }

 private:
  ConvParams p_;
  int64_t in_per_group_ = 1;
  int64_t out_per_group_ = 1;
  int64_t rows_ = 1;  // output channels per group * kernel size
};

}  // namespace

std::unique_ptr<Kernel> make_conv_transpose_kernel(DType dtype, const ConvParams& p) {
  if (dtype == DType::Float64) return std::make_unique<ConvTransposeKernel<double>>(p);
  return std::make_unique<ConvTransposeKernel<float>>(p);
}

}  // namespace etc
