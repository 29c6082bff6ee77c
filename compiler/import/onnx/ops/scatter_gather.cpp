// Lowering of ONNX GatherElements, GatherND, ScatterElements (and the older
// Scatter) and ScatterND to the edge ops of the same names. Shapes are checked
// by the edge ops' infer functions; indices known at compile time are checked
// here, so a model with a bad constant index fails to compile rather than run.
#include <string>
#include <vector>

#include "compiler/import/onnx/lower_context.h"
#include "compiler/import/onnx/ops/register_all.h"

namespace etc::onnx_import {
namespace {

void check_index(const LowerContext& c, int64_t i, int64_t dim, const std::string& where) {
  if (i < -dim || i >= dim)
    c.fail("index " + std::to_string(i) + " is out of range for " + where + " (size " + std::to_string(dim) +
           ")");
}

// Constant indices of an elements op: each must fit the data's axis.
void check_element_indices(const LowerContext& c, int64_t axis) {
  if (!c.is_constant(c.input(1))) return;
  const int64_t dim = c.input_spec(0).shape[static_cast<int>(axis)];
  for (int64_t i : c.constant_ints(1, "indices")) check_index(c, i, dim, "axis " + std::to_string(axis));
}

// Constant index tuples (indices' last dim, k wide): entry t must fit data dim batch_dims + t.
void check_index_tuples(const LowerContext& c, int64_t batch_dims) {
  if (!c.is_constant(c.input(1))) return;
  const Shape data = c.input_spec(0).shape;
  const Shape indices = c.input_spec(1).shape;
  if (indices.rank() == 0) c.fail("indices must have rank >= 1");
  const int64_t k = indices.dim(-1);
  // Shapes the edge op refuses are left to its infer, which names the error.
  if (batch_dims < 0 || k < 1 || batch_dims + k > data.rank()) return;
  const std::vector<int64_t> values = c.constant_ints(1, "indices");
  for (size_t j = 0; j < values.size(); ++j) {
    const int d = static_cast<int>(batch_dims + static_cast<int64_t>(j) % k);
    check_index(c, values[j], data[d], "data dim " + std::to_string(d));
  }
}

std::string reduction(const LowerContext& c) {
  const std::string r = c.opset() < 16 ? "none" : c.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    c.fail("reduction '" + r + "' is not supported");
  return r;
}

int64_t elements_axis(const LowerContext& c) {
  return c.normalize_axis(c.attr_int("axis", 0), c.input_spec(0).shape.rank());
}

void lower_gather_elements(LowerContext& c) {
  const int64_t axis = elements_axis(c);
  check_element_indices(c, axis);
  c.set_output(0, c.emit1(EdgeOp::GatherElements, {c.input(0), c.input(1)}, {{"axis", axis}}));
}

void lower_scatter_elements(LowerContext& c) {
  const int64_t axis = elements_axis(c);
  check_element_indices(c, axis);
  c.set_output(0, c.emit1(EdgeOp::ScatterElements, {c.input(0), c.input(1), c.input(2)},
                          {{"axis", axis}, {"reduction", reduction(c)}}));
}

void lower_gather_nd(LowerContext& c) {
  const int64_t batch_dims = c.opset() < 12 ? 0 : c.attr_int("batch_dims", 0);
  check_index_tuples(c, batch_dims);
  c.set_output(0, c.emit1(EdgeOp::GatherNd, {c.input(0), c.input(1)}, {{"batch_dims", batch_dims}}));
}

void lower_scatter_nd(LowerContext& c) {
  check_index_tuples(c, 0);
  c.set_output(
      0, c.emit1(EdgeOp::ScatterNd, {c.input(0), c.input(1), c.input(2)}, {{"reduction", reduction(c)}}));
}

}  // namespace

void register_scatter_gather_lowerings() {
  register_lowering("GatherElements", {lower_gather_elements, 11});
  register_lowering("GatherND", {lower_gather_nd, 11});
  register_lowering("Scatter", {lower_scatter_elements, 9, 10});
  register_lowering("ScatterElements", {lower_scatter_elements, 11});
  register_lowering("ScatterND", {lower_scatter_nd, 11});
}

}  // namespace etc::onnx_import
