// The lstm kernel: ONNX LSTM with gate order i, o, f, c.
//   i = f(Xt·Wiᵀ + Ht-1·Riᵀ + Pi⊙Ct-1 + Wbi + Rbi)
//   f = f(Xt·Wfᵀ + Ht-1·Rfᵀ + Pf⊙Ct-1 + Wbf + Rbf)   (1 - i with input_forget)
//   c = g(Xt·Wcᵀ + Ht-1·Rcᵀ + Wbc + Rbc)
//   Ct = f⊙Ct-1 + i⊙c
//   o = f(Xt·Woᵀ + Ht-1·Roᵀ + Po⊙Ct + Wbo + Rbo)
//   Ht = o⊙h(Ct)
// X·Wᵀ for all steps up front; each step is one H·Rᵀ product over the
// batch (W and R packed at init when they are constants: packed_gemv.h) plus
// elementwise gate math in scratch.
#include "runtime/kernels/portable/rnn_common.h"

namespace etc {
namespace {

enum Input { kX = 0, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };

template <typename T>
class LstmKernel final : public RnnKernel<T, LstmKernel<T>> {
 public:
  using RnnKernel<T, LstmKernel<T>>::RnnKernel;
  static constexpr bool kStoresCellState = true;

 private:
  friend class RnnKernel<T, LstmKernel<T>>;
  using RnnKernel<T, LstmKernel<T>>::c_;
  using Buffers = RnnBuffers<T>;  // state: the cell state

  void run_direction(const KernelArgs& args, const Buffers& buf, int d) {
    const int64_t hs = c_.hidden, gh = 4 * hs;
    const bool backward = c_.reverse || d == 1;
    const T* r = args.inputs[kR]->data_as<const T>() + d * gh * hs;
    this->input_projection(args.inputs[kX]->data_as<const T>(),
                           args.inputs[kW]->data_as<const T>() + d * gh * c_.input, d, buf.xw);
    if (const Tensor& b = rnn_input(args, kB); b.present()) {
      const T* wb = b.data_as<const T>() + d * 2 * gh;
      const T* rb = wb + gh;
      for (int64_t row = 0; row < c_.seq * c_.batch; ++row)
        for (int64_t j = 0; j < gh; ++j) buf.xw[row * gh + j] += wb[j] + rb[j];
    }
    const Tensor& p = rnn_input(args, kP);
    const T* peep = p.present() ? p.data_as<const T>() + d * 3 * hs : nullptr;
    rnn_load_state(c_, rnn_input(args, kInitialH), d, buf.h);
    rnn_load_state(c_, rnn_input(args, kInitialC), d, buf.state);
    T* y = args.outputs[0]->data_as<T>();
    for (int64_t s = 0; s < c_.seq; ++s) {
      this->recurrent_product(r, d, 0, buf.h, buf.gates, gh);
      for (int64_t b = 0; b < c_.batch; ++b) {
        const int64_t n = buf.lens[b];
        if (s >= n) continue;  // this sequence has ended; its state stays
        const int64_t t = backward ? n - 1 - s : s;
        T* g = buf.gates + b * gh;
        const T* xr = buf.xw + c_.x_row(t, b) * gh;
        for (int64_t j = 0; j < gh; ++j) g[j] += xr[j];
        cell_step(d, g, peep, buf.h + b * hs, buf.state + b * hs);
        std::copy_n(buf.h + b * hs, hs, y + c_.y_offset(t, d, b));
      }
    }
  }

  // One batch row: g holds the i, o, f, c pre-activations without peepholes.
  void cell_step(int d, T* g, const T* peep, T* h, T* cell) const {
    const int64_t hs = c_.hidden;
    T* gi = g;
    T* go = g + hs;
    T* gf = g + 2 * hs;
    T* gc = g + 3 * hs;
    if (peep) {
      for (int64_t j = 0; j < hs; ++j) {
        gi[j] += peep[j] * cell[j];
        gf[j] += peep[2 * hs + j] * cell[j];
      }
    }
    rnn_clip(c_.clip, gi, hs);
    rnn_clip(c_.clip, gf, hs);
    rnn_clip(c_.clip, gc, hs);
    rnn_activate(c_.act(d, 0), gi, hs);
    if (c_.input_forget) {
      for (int64_t j = 0; j < hs; ++j) gf[j] = T(1) - gi[j];
    } else {
      rnn_activate(c_.act(d, 0), gf, hs);
    }
    rnn_activate(c_.act(d, 1), gc, hs);
    for (int64_t j = 0; j < hs; ++j) cell[j] = gf[j] * cell[j] + gi[j] * gc[j];
    if (peep)
      for (int64_t j = 0; j < hs; ++j) go[j] += peep[hs + j] * cell[j];
    rnn_clip(c_.clip, go, hs);
    rnn_activate(c_.act(d, 0), go, hs);
    std::copy_n(cell, hs, gc);  // gc is free again: h(Ct) goes there
    rnn_activate(c_.act(d, 2), gc, hs);
    for (int64_t j = 0; j < hs; ++j) h[j] = go[j] * gc[j];
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_lstm_kernel(const RnnConfig& config, DType dtype) {
  if (dtype == DType::Float64) return std::unique_ptr<Kernel>(std::make_unique<LstmKernel<double>>(config));
  return std::unique_ptr<Kernel>(std::make_unique<LstmKernel<float>>(config));
}

}  // namespace etc
