#pragma once
// Internal to the 'rnn' kernel family (rnn.cpp, rnn_lstm.cpp, rnn_gru.cpp):
// the normalized attributes, the gate activations and the layout helpers
// shared by the lstm and gru kernels.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/core/task_pool.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/gemm.h"
#include "runtime/kernels/portable/packed_gemv.h"
#include "runtime/kernels/portable/vector_math.h"

namespace etc {

// Codes of the `activations` attribute (see edge_ops.def).
enum class RnnActivation : int64_t {
  Sigmoid = 0,
  Tanh,
  Relu,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus,
  kCount,
};

struct RnnActivationFn {
  RnnActivation kind = RnnActivation::Sigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// Everything the kernels need, validated against the input specs.
struct RnnConfig {
  int gates = 4;  // 4 for lstm (i,o,f,c), 3 for gru (z,r,h)
  int64_t hidden = 0;
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int num_dirs = 1;
  bool reverse = false;      // direction == reverse (single direction)
  bool batch_first = false;  // layout 1
  float clip = 0.0f;         // 0: no clipping
  bool input_forget = false;
  bool linear_before_reset = false;
  std::vector<RnnActivationFn> acts;  // acts_per_dir per direction
  int acts_per_dir = 3;

  const RnnActivationFn& act(int dir, int k) const {
    return acts[static_cast<size_t>(dir * acts_per_dir + k)];
  }
  // Row of X (and of the precomputed X·Wᵀ) holding time step t of batch b.
  int64_t x_row(int64_t t, int64_t b) const { return batch_first ? b * seq + t : t * batch + b; }
  // Element offset of Y[t, dir, b, 0] (layout 0) / Y[b, t, dir, 0] (layout 1).
  int64_t y_offset(int64_t t, int dir, int64_t b) const {
    return (batch_first ? (b * seq + t) * num_dirs + dir : (t * num_dirs + dir) * batch + b) * hidden;
  }
  // Element offset of Y_h / Y_c / initial_h / initial_c at (dir, b).
  int64_t state_offset(int dir, int64_t b) const {
    return (batch_first ? b * num_dirs + dir : dir * batch + b) * hidden;
  }
};

// Row ranges (first row, rows) of a direction's R [G*H, H] that a cell
// multiplies by its state separately at each step: all of an LSTM's rows at
// once, a GRU's z, r and h rows at once when the linear map comes before the
// reset, else z and r, then h's rows times r⊙Ht-1.
struct RnnSegments {
  std::pair<int64_t, int64_t> range[2];
  int count = 0;
};
RnnSegments rnn_recurrent_segments(const RnnConfig& c);

// The inputs after ONNX's: W and R packed ahead of time in PackedGemv's
// layout (packed_gemv.h), each direction's segments in order (W: one of all
// its rows; R: rnn_recurrent_segments), as rnn_prepack writes them: float32
// [rnn_prepacked_floats]. Optional; they must hold W's and R's values. The
// kernel reads them in place where it runs the packed products and ignores
// them elsewhere (it then multiplies by W and R as they are).
enum class RnnPacked { kW = 0, kR = 1 };
// Input index of the packed W or R: after LSTM's 8 inputs, GRU's 6.
int rnn_packed_input(bool lstm, RnnPacked which);
int64_t rnn_prepacked_floats(const RnnConfig& c, RnnPacked which);
// Writes the packed form of W ([dirs, G*H, I]) or R ([dirs, G*H, H]) to out
// (rnn_prepacked_floats floats).
void rnn_prepack(const RnnConfig& c, RnnPacked which, const float* w, float* out);
// Above this batch a GEMM over all rows beats the packed recurrent products
// (and R's packed form goes unused).
inline constexpr int64_t kRnnMaxPackedBatch = 4;

Result<RnnConfig> parse_rnn_config(const AttrList& attrs, Span<const TensorSpec> in, bool lstm);

Result<std::unique_ptr<Kernel>> make_lstm_kernel(const RnnConfig& config, DType dtype);
Result<std::unique_ptr<Kernel>> make_gru_kernel(const RnnConfig& config, DType dtype);

// y = f(x) in place over n values.
template <typename T>
void rnn_activate(const RnnActivationFn& f, T* x, int64_t n) {
  const T a = static_cast<T>(f.alpha), b = static_cast<T>(f.beta);
  if constexpr (std::is_same_v<T, float>) {
    // Vectorised tanh and sigmoid (vector_math.h): what LSTMs and GRUs spend
    // their time on, 5 of each hidden unit's gate values per step.
    if (f.kind == RnnActivation::Tanh || f.kind == RnnActivation::Sigmoid) {
      vector_math(f.kind == RnnActivation::Tanh ? VectorFn::Tanh : VectorFn::Sigmoid, x, x, n);
      return;
    }
  }
  switch (f.kind) {
    case RnnActivation::Sigmoid:
      for (int64_t i = 0; i < n; ++i) {
        const T e = std::exp(-std::fabs(x[i]));  // split by sign: exp never overflows
        x[i] = x[i] >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
      }
      break;
    case RnnActivation::Tanh:
      for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      break;
    case RnnActivation::Relu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], T(0));
      break;
    case RnnActivation::Affine:
      for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
      break;
    case RnnActivation::LeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * x[i];
      break;
    case RnnActivation::ThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : T(0);
      break;
    case RnnActivation::ScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = a * std::tanh(b * x[i]);
      break;
    case RnnActivation::HardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(T(1), std::max(T(0), a * x[i] + b));
      break;
    case RnnActivation::Elu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * (std::exp(x[i]) - T(1));
      break;
    case RnnActivation::Softsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::fabs(x[i]));
      break;
    case RnnActivation::Softplus:
      for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] > 0 ? x[i] + std::log1p(std::exp(-x[i])) : std::log1p(std::exp(x[i]));
      break;
    case RnnActivation::kCount: break;
  }
}

// Clips n values to [-c, c] when c > 0 (ONNX `clip`, applied to gate inputs).
template <typename T>
void rnn_clip(float c, T* x, int64_t n) {
  if (c <= 0.0f) return;
  const T hi = static_cast<T>(c);
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(hi, std::max(-hi, x[i]));
}

// Carves 64-byte aligned arrays out of the kernel scratch; used with a null
// base first to size it.
class RnnScratch {
 public:
  explicit RnnScratch(void* base) : base_(static_cast<char*>(base)) {}
  template <typename T>
  T* take(int64_t n) {
    T* p = reinterpret_cast<T*>(base_ ? base_ + used_ : nullptr);
    used_ += (static_cast<size_t>(n) * sizeof(T) + 63) / 64 * 64;
    return p;
  }
  size_t used() const { return used_; }

 private:
  char* base_;
  size_t used_ = 0;
};

// What a recurrent kernel carves from its scratch per call: the input
// projection of every step ([seq * batch, G*H]: X·Wᵀ + biases), one step's
// gates ([batch, G*H]), the hidden state and one more [batch, H] state (the
// LSTM's cell, the GRU's r⊙Ht-1), and the sequence lengths. G: gates per
// cell (GRU 3, LSTM 4).
template <typename T>
struct RnnBuffers {
  T* xw;
  T* gates;
  T* h;
  T* state;
  int32_t* lens;
};

template <typename T>
RnnBuffers<T> rnn_carve(RnnScratch& s, const RnnConfig& c, int64_t num_gates) {
  const int64_t gh = num_gates * c.hidden;
  RnnBuffers<T> b;
  b.xw = s.take<T>(c.seq * c.batch * gh);
  b.gates = s.take<T>(c.batch * gh);
  b.h = s.take<T>(c.batch * c.hidden);
  b.state = s.take<T>(c.batch * c.hidden);
  b.lens = s.take<int32_t>(c.batch);
  return b;
}

// Input i, or an absent tensor when the call has fewer inputs.
inline const Tensor& rnn_input(const KernelArgs& args, int i) {
  static const Tensor kAbsent;
  return static_cast<size_t>(i) < args.inputs.size() ? *args.inputs[static_cast<size_t>(i)] : kAbsent;
}

// Per-batch sequence lengths from the optional int32 input (all `seq` when
// absent); fails on values outside [0, seq].
Status rnn_sequence_lengths(const RnnConfig& config, const Tensor& lens, int32_t* out);

// Y[t, dir, b] = 0 for the padded steps t >= len[b] of every direction.
template <typename T>
void rnn_zero_padding(const RnnConfig& c, const int32_t* lens, T* y) {
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t t = lens[b]; t < c.seq; ++t)
      for (int d = 0; d < c.num_dirs; ++d) std::fill_n(y + c.y_offset(t, d, b), c.hidden, T(0));
}

// Fills state [batch, H] of direction dir from initial (or zeros).
template <typename T>
void rnn_load_state(const RnnConfig& c, const Tensor& initial, int dir, T* state) {
  for (int64_t b = 0; b < c.batch; ++b) {
    T* dst = state + b * c.hidden;
    if (initial.present())
      std::copy_n(initial.data_as<const T>() + c.state_offset(dir, b), c.hidden, dst);
    else
      std::fill_n(dst, c.hidden, T(0));
  }
}

// Writes state [batch, H] of direction dir to an optional Y_h / Y_c output.
template <typename T>
void rnn_store_state(const RnnConfig& c, const T* state, int dir, Tensor* out) {
  if (!out) return;
  for (int64_t b = 0; b < c.batch; ++b)
    std::copy_n(state + b * c.hidden, c.hidden, out->data_as<T>() + c.state_offset(dir, b));
}

// The shape every recurrent kernel shares: carve the scratch, read the
// sequence lengths, zero the padded steps, run each direction (Cell's
// run_direction) and store its final states: Y_h as output 1 and, when the
// cell keeps one (LSTM), the cell state as output 2. Both ONNX ops take the
// sequence lengths as input 4.
template <typename T, typename Cell>
class RnnKernel : public Kernel {
 public:
  explicit RnnKernel(RnnConfig c)
      : c_(std::move(c)),
        segments_(rnn_recurrent_segments(c_)),
        backward_(static_cast<size_t>(c_.num_dirs * segments_.count), false) {}

  size_t scratch_bytes() const override {
    RnnScratch s(nullptr);
    carve(s);
    return s.used();
  }

  // Each direction's input weights (W, input 1) and, when the batch is small,
  // recurrent weights (R, input 2) for the packed products, when they are
  // program constants and the CPU has the packed kernel: their forms packed
  // ahead of time read in place when the program has them, else packed here.
  Status prepare(Span<const Tensor* const> constants) override {
    if constexpr (std::is_same_v<T, float>) {
      if (!packed_gemv_available()) return Status::Ok();
      const bool lstm = c_.gates == 4;
      packed_w_ = view_or_pack(constants, kInputWeights, rnn_packed_input(lstm, RnnPacked::kW), c_.input,
                               {{{0, c_.gates * c_.hidden}}, 1});
      if (c_.batch <= kRnnMaxPackedBatch)
        packed_r_ = view_or_pack(constants, kRecurrenceInput, rnn_packed_input(lstm, RnnPacked::kR),
                                 c_.hidden, segments_);
    }
    return Status::Ok();
  }

  // When a product is large enough to split (PackedGemv::run_rows_on,
  // gemm_blocks): an input projection or a step's product of
  // PackedGemv::kThreadedWork multiply-adds or more.
  bool wants_threads() const override {
    const int64_t gh = c_.gates * c_.hidden;
    return std::max(c_.seq * c_.batch * gh * c_.input, c_.batch * gh * c_.hidden) >=
           PackedGemv::kThreadedWork;
  }

  Status run(const KernelArgs& args) override {
    pool_ = args.pool;
    RnnScratch s(args.scratch);
    const RnnBuffers<T> buf = carve(s);
    const Tensor& lens = rnn_input(args, kSequenceLensInput);
    ETC_TRY(rnn_sequence_lengths(c_, lens, buf.lens));
    if (lens.present()) rnn_zero_padding(c_, buf.lens, args.outputs[0]->data_as<T>());
    for (int d = 0; d < c_.num_dirs; ++d) {
      static_cast<Cell*>(this)->run_direction(args, buf, d);
      rnn_store_state(c_, buf.h, d, output(args, 1));
      if (Cell::kStoresCellState) rnn_store_state(c_, buf.state, d, output(args, 2));
    }
    return Status::Ok();
  }

 protected:
  static constexpr int kSequenceLensInput = 4;
  static constexpr size_t kInputWeights = 1;
  static constexpr size_t kRecurrenceInput = 2;

  // pack_constant of input i, or views of the packed input `packed` (its
  // direction-segment pieces in order) when that is a constant and aligned.
  std::vector<PackedGemv> view_or_pack(Span<const Tensor* const> constants, size_t i, int packed_i, int64_t k,
                                       const RnnSegments& segments) const {
    const size_t p = static_cast<size_t>(packed_i);
    if (constants.size() > p && constants[p] != nullptr) {
      const float* at = constants[p]->template data_as<const float>();
      std::vector<PackedGemv> views;
      for (int d = 0; d < c_.num_dirs; ++d)
        for (int j = 0; j < segments.count; ++j) {
          const int64_t rows = segments.range[j].second;
          views.push_back(PackedGemv::view(at, rows, k));
          if (!views.back().packed()) return pack_constant(constants, i, k, segments);
          at += PackedGemv::packed_floats(rows, k);
        }
      return views;
    }
    return pack_constant(constants, i, k, segments);
  }

  // One PackedGemv per direction and segment of constant input i ([dirs,
  // G*H, k]); empty when it is not a constant or memory runs out (the GEMM
  // path then runs).
  std::vector<PackedGemv> pack_constant(Span<const Tensor* const> constants, size_t i, int64_t k,
                                        const RnnSegments& segments) const {
    if (constants.size() <= i || constants[i] == nullptr) return {};
    const float* w = constants[i]->template data_as<const float>();
    std::vector<PackedGemv> packed;
    for (int d = 0; d < c_.num_dirs; ++d) {
      const float* w_dir = w + d * c_.gates * c_.hidden * k;
      for (int j = 0; j < segments.count; ++j) {
        const auto [row0, rows] = segments.range[j];
        packed.push_back(PackedGemv::pack(w_dir + row0 * k, rows, k, k));
        if (!packed.back().packed()) return {};
      }
    }
    return packed;
  }

  // xw[row, :] = X[row, :] · W_dᵀ for every row of X (all time steps).
  void input_projection(const T* x, const T* w_dir, int d, T* xw) const {
    const int64_t gh = c_.gates * c_.hidden;
    if constexpr (std::is_same_v<T, float>) {
      if (!packed_w_.empty()) {
        packed_w_[static_cast<size_t>(d)].run_rows_on(pool_, x, c_.input, c_.seq * c_.batch, xw, gh);
        return;
      }
    }
    gemm_blocks(c_.seq * c_.batch, gh, c_.input, x, c_.input, w_dir, xw, gh, kProjectionBlock, false);
  }

  // out[b, 0:rows] = h[b, :] · R_dᵀ over R_d's rows [row0, row0 + rows), for
  // every batch row (row stride ldo), where (row0, rows) is recurrent
  // segment `segment` of the cell. r_dir: direction d's R.
  void recurrent_product(const T* r_dir, int d, int segment, const T* h, T* out, int64_t ldo) const {
    const auto [row0, rows] = segments_.range[segment];
    // Each step the other way through R (PackedGemv::run_rows_on).
    const size_t i = static_cast<size_t>(d * segments_.count + segment);
    backward_[i] = !backward_[i];
    if constexpr (std::is_same_v<T, float>) {
      if (!packed_r_.empty()) {
        packed_r_[i].run_rows_on(pool_, h, c_.hidden, c_.batch, out, ldo, backward_[i]);
        return;
      }
    }
    gemm_blocks(c_.batch, rows, c_.hidden, h, c_.hidden, r_dir + row0 * c_.hidden, out, ldo,
                PackedGemv::kBlock, backward_[i]);
  }

  // Rows of W per GEMM of an input projection without a packed form: a
  // GEMM over many rows repacks x for each block, so its blocks are larger.
  static constexpr int64_t kProjectionBlock = 4 * PackedGemv::kBlock;

  // y[r, j] = x[r, :] · w[j, :] for m rows of x (row stride ldx) and the n
  // rows of w (row stride k), where no packed form is used (W or R fed at
  // run time, float64, a batch above kRnnMaxPackedBatch, a CPU without
  // AVX-512): GEMMs of `block` rows of w at a time, split over the pool and
  // walked either way as the packed products are, so those gains hold on
  // every CPU. The blocks are the same on any thread count, and so are the
  // bytes.
  void gemm_blocks(int64_t m, int64_t n, int64_t k, const T* x, int64_t ldx, const T* w, T* y, int64_t ldy,
                   int64_t block, bool backward) const {
    const auto blocks = static_cast<size_t>((n + block - 1) / block);
    const bool split =
        pool_ != nullptr && pool_->threads() > 1 && blocks > 1 && m * n * k >= PackedGemv::kThreadedWork;
    TaskPool::run_owned(split ? pool_ : nullptr, blocks, backward, [&](size_t first, size_t end) {
      for (size_t b = first; b < end; ++b) {
        const int64_t j0 = static_cast<int64_t>(backward ? first + end - 1 - b : b) * block;
        gemm_typed(false, true, m, std::min(block, n - j0), k, x, ldx, w + j0 * k, k, T(0), y + j0, ldy);
      }
    });
  }

  RnnBuffers<T> carve(RnnScratch& s) const { return rnn_carve<T>(s, c_, c_.gates); }
  static Tensor* output(const KernelArgs& args, size_t i) {
    return args.outputs.size() > i ? args.outputs[i] : nullptr;
  }

  RnnConfig c_;
  RnnSegments segments_;                // rnn_recurrent_segments(c_)
  std::vector<PackedGemv> packed_w_;    // [direction] when packed; else empty
  std::vector<PackedGemv> packed_r_;    // [direction][segment] when packed; else empty
  TaskPool* pool_ = nullptr;            // this run's KernelArgs::pool
  mutable std::vector<bool> backward_;  // by direction and segment: the way its last product went
};

}  // namespace etc
