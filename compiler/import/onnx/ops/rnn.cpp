// Lowering of ONNX LSTM and GRU (opsets 7..17; `layout` from 14) to the edge
// ops lstm and gru, which keep ONNX inputs, layouts and gate orders. The
// activation names become codes with every alpha/beta filled in.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

struct ActivationInfo {
  const char* name;  // lower case
  int64_t code;      // edge_ops.def activation code
  int num_params;    // alpha, then beta, taken from activation_alpha/_beta
  float alpha;       // ONNX defaults
  float beta;
};

constexpr ActivationInfo kActivations[] = {
    {"sigmoid", 0, 0, 0.0f, 0.0f},    {"tanh", 1, 0, 0.0f, 0.0f},
    {"relu", 2, 0, 0.0f, 0.0f},       {"affine", 3, 2, 1.0f, 0.0f},
    {"leakyrelu", 4, 1, 0.01f, 0.0f}, {"thresholdedrelu", 5, 1, 1.0f, 0.0f},
    {"scaledtanh", 6, 2, 1.0f, 1.0f}, {"hardsigmoid", 7, 2, 0.2f, 0.5f},
    {"elu", 8, 1, 1.0f, 0.0f},        {"softsign", 9, 0, 0.0f, 0.0f},
    {"softplus", 10, 0, 0.0f, 0.0f},
};

std::vector<std::string> attr_strings(const LowerContext& c, const std::string& name) {
  for (const auto& a : c.node().attribute())
    if (a.name() == name) return {a.strings().begin(), a.strings().end()};
  return {};
}

// Activation codes with their alpha/beta; the parameter lists are consumed in
// order by the activations that take parameters (as ONNX Runtime does).
void lower_activations(const LowerContext& c, bool lstm, int num_dirs, ir::Attrs& attrs) {
  const size_t per_dir = lstm ? 3 : 2;
  std::vector<std::string> names = attr_strings(c, "activations");
  if (names.empty())
    names = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                 : std::vector<std::string>{"Sigmoid", "Tanh"};
  if (names.size() == per_dir && num_dirs == 2) {
    const std::vector<std::string> forward = names;  // inserting a vector's own range into it is undefined
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(num_dirs))
    c.fail("activations has " + std::to_string(names.size()) + " entries, expected " +
           std::to_string(per_dir * static_cast<size_t>(num_dirs)));
  const std::vector<float> alphas = c.attr_floats("activation_alpha");
  const std::vector<float> betas = c.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<int64_t> codes;
  std::vector<float> alpha, beta;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& a : kActivations)
      if (lower == a.name) info = &a;
    if (!info) c.fail("activation '" + name + "' is not supported");
    codes.push_back(info->code);
    alpha.push_back(info->num_params >= 1 && next_alpha < alphas.size() ? alphas[next_alpha++] : info->alpha);
    beta.push_back(info->num_params >= 2 && next_beta < betas.size() ? betas[next_beta++] : info->beta);
  }
  attrs.set("activations", codes);
  attrs.set("activation_alpha", alpha);
  attrs.set("activation_beta", beta);
}

// A sequence_lens that is constant and equal to the sequence length for
// every batch entry says nothing: drop it so the kernel skips masking.
ir::ValueId sequence_lens(LowerContext& c, int64_t seq) {
  if (!c.has_input(4)) return ir::kNoValue;
  const ir::ValueId v = c.input(4);
  if (c.spec(v).dtype != DType::Int32) c.fail("sequence_lens must be int32");
  if (!c.is_constant(v)) return v;
  const std::vector<int64_t> lens = c.constant_ints(4, "sequence_lens");
  for (int64_t n : lens) {
    if (n < 0 || n > seq)
      c.fail("sequence_lens value " + std::to_string(n) + " is outside [0, " + std::to_string(seq) + "]");
    if (n != seq) return v;
  }
  return ir::kNoValue;
}

void lower_rnn(LowerContext& c, bool lstm) {
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("direction '" + direction + "' is not supported");
  const int num_dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = c.opset() >= 14 ? c.attr_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) c.fail("layout " + std::to_string(layout) + " is not 0 or 1");
  const TensorSpec x = c.input_spec(0);
  const TensorSpec r = c.input_spec(2);
  if (x.shape.rank() != 3 || r.shape.rank() != 3) c.fail("X and R must have rank 3");
  const int64_t hidden = r.shape[2];
  if (c.has_attr("hidden_size") && c.attr_int("hidden_size") != hidden)
    c.fail("hidden_size " + std::to_string(c.attr_int("hidden_size")) + " does not match R's last dim " +
           std::to_string(hidden));

  ir::Attrs attrs;
  attrs.set("hidden_size", hidden);
  attrs.set("direction", direction);
  attrs.set("layout", layout);
  lower_activations(c, lstm, num_dirs, attrs);
  if (c.has_attr("clip")) {
    const float clip = c.attr_float("clip", 0.0f);
    if (!(clip > 0.0f)) c.fail("clip must be positive, got " + std::to_string(clip));
    attrs.set("clip", clip);
  }
  if (lstm) attrs.set("input_forget", c.attr_int("input_forget", 0));
  if (!lstm) attrs.set("linear_before_reset", c.attr_int("linear_before_reset", 0));

  const int max_inputs = lstm ? 8 : 6;
  std::vector<ir::ValueId> inputs;
  for (int i = 0; i < max_inputs; ++i) {
    if (i == 4)
      inputs.push_back(sequence_lens(c, layout == 1 ? x.shape[1] : x.shape[0]));
    else
      inputs.push_back(c.has_input(i) ? c.input(i) : ir::kNoValue);
  }
  while (inputs.back() == ir::kNoValue) inputs.pop_back();

  int num_outputs = 1;  // Y is always computed: it is the kernel's working output
  for (int i = 0; i < c.num_outputs(); ++i)
    if (!c.node().output(i).empty()) num_outputs = i + 1;
  const auto outs =
      c.emit(lstm ? EdgeOp::Lstm : EdgeOp::Gru, std::move(inputs), std::move(attrs), num_outputs);
  for (int i = 0; i < num_outputs; ++i) c.set_output(i, outs[static_cast<size_t>(i)]);
}

}  // namespace

void register_rnn_lowerings() {
  register_lowering("LSTM", {[](LowerContext& c) { lower_rnn(c, true); }, 7, 17});
  register_lowering("GRU", {[](LowerContext& c) { lower_rnn(c, false); }, 7, 17});
}

}  // namespace etc::onnx_import
