// The gru kernel: ONNX GRU with gate order z, r, h.
//   z = f(Xt·Wzᵀ + Ht-1·Rzᵀ + Wbz + Rbz)
//   r = f(Xt·Wrᵀ + Ht-1·Rrᵀ + Wbr + Rbr)
//   h = g(Xt·Whᵀ + (r⊙Ht-1)·Rhᵀ + Rbh + Wbh)          linear_before_reset = 0
//   h = g(Xt·Whᵀ + r⊙(Ht-1·Rhᵀ + Rbh) + Wbh)          linear_before_reset = 1
//   Ht = (1 - z)⊙h + z⊙Ht-1
// X·Wᵀ for all steps up front; each step is one H·Rᵀ product (plus one
// (r⊙H)·Rhᵀ when the reset gate comes first); W and R are packed at init when
// they are constants (packed_gemv.h).
#include "runtime/kernels/portable/rnn_common.h"

namespace etc {
namespace {

enum Input { kX = 0, kW, kR, kB, kSeqLens, kInitialH };

template <typename T>
class GruKernel final : public RnnKernel<T, GruKernel<T>> {
 public:
  using RnnKernel<T, GruKernel<T>>::RnnKernel;
  static constexpr bool kStoresCellState = false;

 private:
  friend class RnnKernel<T, GruKernel<T>>;
  using RnnKernel<T, GruKernel<T>>::c_;
  using Buffers = RnnBuffers<T>;  // state: the r⊙Ht-1 product

  void run_direction(const KernelArgs& args, const Buffers& buf, int d) {
    const int64_t hs = c_.hidden, gh = 3 * hs;
    const T* r = args.inputs[kR]->data_as<const T>() + d * gh * hs;
    this->input_projection(args.inputs[kX]->data_as<const T>(),
                           args.inputs[kW]->data_as<const T>() + d * gh * c_.input, d, buf.xw);
    const T* rbh = nullptr;  // Rbh when linear_before_reset keeps it inside r⊙(...)
    if (const Tensor& b = rnn_input(args, kB); b.present()) {
      const T* wb = b.data_as<const T>() + d * 2 * gh;
      const T* rb = wb + gh;
      const int64_t folded = c_.linear_before_reset ? 2 * hs : gh;
      for (int64_t row = 0; row < c_.seq * c_.batch; ++row) {
        T* xr = buf.xw + row * gh;
        for (int64_t j = 0; j < gh; ++j) xr[j] += wb[j] + (j < folded ? rb[j] : T(0));
      }
      if (c_.linear_before_reset) rbh = rb + 2 * hs;
    }
    rnn_load_state(c_, rnn_input(args, kInitialH), d, buf.h);
    for (int64_t s = 0; s < c_.seq; ++s) step(args, buf, d, s, r, rbh);
  }

  void step(const KernelArgs& args, const Buffers& buf, int d, int64_t s, const T* r, const T* rbh) {
    const int64_t hs = c_.hidden, gh = 3 * hs;
    const bool backward = c_.reverse || d == 1;
    const bool lbr = c_.linear_before_reset;
    // Recurrent part of z, r (and of h when the linear map comes before the reset).
    this->recurrent_product(r, d, 0, buf.h, buf.gates, gh);
    auto time_of = [&](int64_t b) { return backward ? buf.lens[b] - 1 - s : s; };
    for (int64_t b = 0; b < c_.batch; ++b) {
      T* g = buf.gates + b * gh;
      T* hb = buf.h + b * hs;
      if (s >= buf.lens[b]) {
        std::fill_n(buf.state + b * hs, hs, T(0));
        continue;
      }
      const T* xr = buf.xw + c_.x_row(time_of(b), b) * gh;
      for (int64_t j = 0; j < 2 * hs; ++j) g[j] += xr[j];
      rnn_clip(c_.clip, g, 2 * hs);
      rnn_activate(c_.act(d, 0), g, 2 * hs);
      const T* rg = g + hs;
      if (lbr) {
        for (int64_t j = 0; j < hs; ++j)
          g[2 * hs + j] = xr[2 * hs + j] + rg[j] * (g[2 * hs + j] + (rbh ? rbh[j] : T(0)));
      } else {
        for (int64_t j = 0; j < hs; ++j) buf.state[b * hs + j] = rg[j] * hb[j];
      }
    }
    if (!lbr) {  // (r⊙Ht-1)·Rhᵀ for the whole batch, into the h slots of gates
      this->recurrent_product(r, d, 1, buf.state, buf.gates + 2 * hs, gh);
    }
    T* y = args.outputs[0]->data_as<T>();
    for (int64_t b = 0; b < c_.batch; ++b) {
      if (s >= buf.lens[b]) continue;
      const int64_t t = time_of(b);
      T* g = buf.gates + b * gh;
      T* hn = g + 2 * hs;
      if (!lbr) {
        const T* xr = buf.xw + c_.x_row(t, b) * gh;
        for (int64_t j = 0; j < hs; ++j) hn[j] += xr[2 * hs + j];
      }
      rnn_clip(c_.clip, hn, hs);
      rnn_activate(c_.act(d, 1), hn, hs);
      T* hb = buf.h + b * hs;
      for (int64_t j = 0; j < hs; ++j) hb[j] = (T(1) - g[j]) * hn[j] + g[j] * hb[j];
      std::copy_n(hb, hs, y + c_.y_offset(t, d, b));
    }
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_gru_kernel(const RnnConfig& config, DType dtype) {
  if (dtype == DType::Float64) return std::unique_ptr<Kernel>(std::make_unique<GruKernel<double>>(config));
  return std::unique_ptr<Kernel>(std::make_unique<GruKernel<float>>(config));
}

}  // namespace etc
