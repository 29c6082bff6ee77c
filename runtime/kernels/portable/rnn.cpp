// Portable kernels of the 'rnn' family: lstm and gru with ONNX semantics
// (see runtime/kernels/edge_ops.def). This file validates the attributes and
// shapes; the recurrences live in rnn_lstm.cpp and rnn_gru.cpp.
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/portable/rnn_common.h"

namespace etc {
namespace {

enum Input { kX = 0, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };

bool present(Span<const TensorSpec> in, int i) {
  return static_cast<size_t>(i) < in.size() && in[static_cast<size_t>(i)].dtype != DType::Invalid;
}

Status check_shape(Span<const TensorSpec> in, int i, const char* name, const Shape& want, DType dtype) {
  if (!present(in, i)) return Status::Ok();
  const TensorSpec& s = in[static_cast<size_t>(i)];
  ETC_CHECK_OR_FAIL(s.dtype == dtype, Error::InvalidType, name, " is ", dtype_name(s.dtype), ", expected ",
                    dtype_name(dtype));
  ETC_CHECK_OR_FAIL(s.shape == want, Error::InvalidShape, name, " has shape ", s.shape.str(), ", expected ",
                    want.str());
  return Status::Ok();
}

Status parse_activations(const AttrList& attrs, RnnConfig& c) {
  const size_t n = static_cast<size_t>(c.acts_per_dir * c.num_dirs);
  ETC_ASSIGN_OR_RETURN(std::vector<int64_t> kinds, attrs.get_ints("activations", {}));
  if (kinds.empty()) {  // ONNX defaults: sigmoid, tanh(, tanh)
    for (int d = 0; d < c.num_dirs; ++d)
      for (int k = 0; k < c.acts_per_dir; ++k) kinds.push_back(k == 0 ? 0 : 1);
  }
  ETC_CHECK_OR_FAIL(kinds.size() == n, Error::InvalidProgram, "activations has ",
                    std::to_string(kinds.size()), " values, expected ", std::to_string(n));
  std::vector<float> alpha(n, 0.0f), beta(n, 0.0f);
  if (attrs.has("activation_alpha")) {
    ETC_ASSIGN_OR_RETURN(alpha, attrs.get_floats("activation_alpha"));
  }
  if (attrs.has("activation_beta")) {
    ETC_ASSIGN_OR_RETURN(beta, attrs.get_floats("activation_beta"));
  }
  ETC_CHECK_OR_FAIL(alpha.size() == n && beta.size() == n, Error::InvalidProgram,
                    "activation_alpha / activation_beta need one value per activation");
  c.acts.clear();
  for (size_t i = 0; i < n; ++i) {
    ETC_CHECK_OR_FAIL(kinds[i] >= 0 && kinds[i] < static_cast<int64_t>(RnnActivation::kCount),
                      Error::InvalidProgram, "unknown activation code ", std::to_string(kinds[i]));
    c.acts.push_back({static_cast<RnnActivation>(kinds[i]), alpha[i], beta[i]});
  }
  return Status::Ok();
}

Status parse_direction(const AttrList& attrs, RnnConfig& c) {
  ETC_ASSIGN_OR_RETURN(std::string_view dir, attrs.get_string("direction", "forward"));
  if (dir == "forward" || dir == "reverse") {
    c.num_dirs = 1;
    c.reverse = dir == "reverse";
    return Status::Ok();
  }
  ETC_CHECK_OR_FAIL(dir == "bidirectional", Error::InvalidProgram, "unknown direction '", std::string(dir),
                    "'");
  c.num_dirs = 2;
  return Status::Ok();
}

Shape state_shape(const RnnConfig& c) {
  return c.batch_first ? Shape{c.batch, c.num_dirs, c.hidden} : Shape{c.num_dirs, c.batch, c.hidden};
}

}  // namespace

Result<RnnConfig> parse_rnn_config(const AttrList& attrs, Span<const TensorSpec> in, bool lstm) {
  RnnConfig c;
  c.gates = lstm ? 4 : 3;
  c.acts_per_dir = lstm ? 3 : 2;
  ETC_ASSIGN_OR_RETURN(int64_t layout, attrs.get_int("layout", 0));
  ETC_CHECK_OR_FAIL(layout == 0 || layout == 1, Error::InvalidProgram, "layout must be 0 or 1");
  c.batch_first = layout == 1;
  ETC_TRY(parse_direction(attrs, c));
  ETC_ASSIGN_OR_RETURN(c.hidden, attrs.get_int("hidden_size"));
  ETC_ASSIGN_OR_RETURN(c.clip, attrs.get_float("clip", 0.0f));
  ETC_CHECK_OR_FAIL(c.clip >= 0.0f, Error::InvalidProgram, "clip must not be negative");
  ETC_ASSIGN_OR_RETURN(int64_t input_forget, attrs.get_int("input_forget", 0));
  ETC_ASSIGN_OR_RETURN(int64_t lbr, attrs.get_int("linear_before_reset", 0));
  c.input_forget = lstm && input_forget != 0;
  c.linear_before_reset = !lstm && lbr != 0;
  ETC_TRY(parse_activations(attrs, c));

  const TensorSpec& x = in[kX];
  const DType t = x.dtype;
  ETC_CHECK_OR_FAIL(t == DType::Float32 || t == DType::Float64, Error::InvalidType,
                    "expects float32 or float64, got ", dtype_name(t));
  ETC_CHECK_OR_FAIL(x.shape.rank() == 3, Error::InvalidShape, "X must have rank 3, got ", x.shape.str());
  c.seq = c.batch_first ? x.shape[1] : x.shape[0];
  c.batch = c.batch_first ? x.shape[0] : x.shape[1];
  c.input = x.shape[2];
  ETC_CHECK_OR_FAIL(c.hidden > 0 && c.seq > 0 && c.batch > 0 && c.input > 0, Error::InvalidShape,
                    "empty X or hidden_size");
  const int64_t d = c.num_dirs, gh = c.gates * c.hidden;
  ETC_TRY(check_shape(in, kW, "W", Shape{d, gh, c.input}, t));
  ETC_TRY(check_shape(in, kR, "R", Shape{d, gh, c.hidden}, t));
  ETC_TRY(check_shape(in, kB, "B", Shape{d, 2 * gh}, t));
  ETC_TRY(check_shape(in, kSeqLens, "sequence_lens", Shape{c.batch}, DType::Int32));
  ETC_TRY(check_shape(in, kInitialH, "initial_h", state_shape(c), t));
  if (lstm) {
    ETC_TRY(check_shape(in, kInitialC, "initial_c", state_shape(c), t));
    ETC_TRY(check_shape(in, kP, "P", Shape{d, 3 * c.hidden}, t));
  }
  for (RnnPacked which : {RnnPacked::kW, RnnPacked::kR}) {
    const int i = rnn_packed_input(lstm, which);
    if (!present(in, i)) continue;
    const char* name = which == RnnPacked::kW ? "W packed ahead of time" : "R packed ahead of time";
    ETC_CHECK_OR_FAIL(t == DType::Float32, Error::InvalidType, name, " is given for a ", dtype_name(t),
                      " cell (only float32 cells take it)");
    ETC_TRY(check_shape(in, i, name, Shape{rnn_prepacked_floats(c, which)}, t));
  }
  return c;
}

RnnSegments rnn_recurrent_segments(const RnnConfig& c) {
  if (c.gates == 4 || c.linear_before_reset) return {{{0, c.gates * c.hidden}}, 1};
  return {{{0, 2 * c.hidden}, {2 * c.hidden, c.hidden}}, 2};
}

int rnn_packed_input(bool lstm, RnnPacked which) { return (lstm ? 8 : 6) + static_cast<int>(which); }

namespace {

// Columns (k) and the row ranges of one direction of W or R, packed one
// range after another.
std::pair<int64_t, RnnSegments> packed_pieces(const RnnConfig& c, RnnPacked which) {
  if (which == RnnPacked::kW) return {c.input, RnnSegments{{{0, c.gates * c.hidden}}, 1}};
  return {c.hidden, rnn_recurrent_segments(c)};
}

}  // namespace

int64_t rnn_prepacked_floats(const RnnConfig& c, RnnPacked which) {
  const auto [k, segments] = packed_pieces(c, which);
  int64_t floats = 0;
  for (int j = 0; j < segments.count; ++j) floats += PackedGemv::packed_floats(segments.range[j].second, k);
  return floats * c.num_dirs;
}

void rnn_prepack(const RnnConfig& c, RnnPacked which, const float* w, float* out) {
  const auto [k, segments] = packed_pieces(c, which);
  for (int d = 0; d < c.num_dirs; ++d) {
    const float* w_dir = w + d * c.gates * c.hidden * k;
    for (int j = 0; j < segments.count; ++j) {
      const auto [row0, rows] = segments.range[j];
      PackedGemv::pack_into(w_dir + row0 * k, rows, k, k, out);
      out += PackedGemv::packed_floats(rows, k);
    }
  }
}

Status rnn_sequence_lengths(const RnnConfig& c, const Tensor& lens, int32_t* out) {
  for (int64_t b = 0; b < c.batch; ++b) {
    const int32_t n = lens.present() ? lens.data_as<const int32_t>()[b] : static_cast<int32_t>(c.seq);
    ETC_CHECK_OR_FAIL(n >= 0 && n <= c.seq, Error::InvalidArgument, "sequence_lens[", std::to_string(b),
                      "] = ", std::to_string(n), " is outside [0, ", std::to_string(c.seq), "]");
    out[b] = n;
  }
  return Status::Ok();
}

namespace {

template <bool kLstm>
Status infer_rnn(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(RnnConfig c, parse_rnn_config(attrs, in, kLstm));
  const DType t = in[kX].dtype;
  out[0] = TensorSpec{t, c.batch_first ? Shape{c.batch, c.seq, c.num_dirs, c.hidden}
                                       : Shape{c.seq, c.num_dirs, c.batch, c.hidden}};
  for (size_t i = 1; i < out.size(); ++i) out[i] = TensorSpec{t, state_shape(c)};
  return Status::Ok();
}

template <bool kLstm>
Result<std::unique_ptr<Kernel>> create_rnn(const AttrList& attrs, Span<const TensorSpec> in,
                                           Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(RnnConfig c, parse_rnn_config(attrs, in, kLstm));
  return kLstm ? make_lstm_kernel(c, in[kX].dtype) : make_gru_kernel(c, in[kX].dtype);
}

}  // namespace

const OpDef* rnn_op_def(EdgeOp op) {
  // ONNX's inputs, then W and R packed ahead of time (rnn_packed_input).
  static const OpDef kLstmDef{EdgeOp::Lstm, 3, 10, 1, 3, infer_rnn<true>, create_rnn<true>};
  static const OpDef kGruDef{EdgeOp::Gru, 3, 8, 1, 2, infer_rnn<false>, create_rnn<false>};
  if (op == EdgeOp::Lstm) return &kLstmDef;
  if (op == EdgeOp::Gru) return &kGruDef;
  return nullptr;
}

}  // namespace etc
