// reduce_mean / sum / max / min / sum_square (other than global average
// pooling, pool.cpp) → native Reduce nodes. Each Reduce node reduces one run
// of consecutive blob axes; axes that are not consecutive in the blob
// layout reduce run by run (a mean of equal-sized means is the mean).
#include "partitioners/xnnpack/xnnpack_rules.h"
#include "preprocessors/xnnpack/lowering.h"

namespace etc::xnnpack {
namespace {

fb::ReduceOp reduce_op(EdgeOp op) {
  switch (op) {
    case EdgeOp::ReduceMean: return fb::ReduceOp::Mean;
    case EdgeOp::ReduceMax: return fb::ReduceOp::Max;
    case EdgeOp::ReduceMin: return fb::ReduceOp::Min;
    case EdgeOp::ReduceSumSquare: return fb::ReduceOp::SumSquare;
    default: return fb::ReduceOp::Sum;
  }
}

}  // namespace

void emit_reduce(Lowering& l, const ir::Node& n) {
  if (is_global_avg_pool(l.graph(), n)) return emit_pool(l, n);
  const ir::ValueId x = n.inputs[0];
  const bool keep = attr_int(n, "keepdims", 1) != 0;
  // Without keepdims the output's axes are the kept ones in ONNX order.
  const bool nhwc = keep && l.nhwc(x);
  const int rank = shape_of(l.graph(), x).rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  const std::vector<uint32_t> at = stored_axes(rank, nhwc);
  for (int64_t a : attr_ints(n, "axes")) reduced[at[static_cast<size_t>(a)]] = true;
  std::vector<uint64_t> dims = xnn_dims(shape_of(l.graph(), x), nhwc);
  uint32_t in = l.value_as(x, nhwc);
  const uint32_t out = l.output_as(n.outputs[0], nhwc);
  fb::ReduceOp op = reduce_op(n.op);
  for (size_t d = 0; d < reduced.size();) {
    if (!reduced[d]) {
      ++d;
      continue;
    }
    NodeRecord r;
    r.type = fb::NodeType::Reduce;
    r.covers.push_back(&n);
    r.reduce_op = op;
    for (; d < reduced.size() && reduced[d]; ++d) r.axes.push_back(static_cast<uint32_t>(d)), dims[d] = 1;
    bool last = true;
    for (size_t e = d; e < reduced.size(); ++e) last = last && !reduced[e];
    uint32_t to = out;
    if (!last) {
      TensorRecord t;
      t.dims = dims;
      to = l.blob().add_tensor(std::move(t));
    }
    r.inputs = {in};
    r.outputs = {to};
    l.blob().nodes().push_back(std::move(r));
    in = to;
    // Squares are summed once; later runs add the partial sums.
    if (op == fb::ReduceOp::SumSquare) op = fb::ReduceOp::Sum;
  }
}

}  // namespace etc::xnnpack
