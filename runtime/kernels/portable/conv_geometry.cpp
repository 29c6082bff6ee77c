#include "runtime/kernels/portable/conv_geometry.h"

#include <string>
#include <vector>

namespace etc {
namespace {

// Spatial dim i of the op maps to slot i + (3 - rank) of the 3-D layout.
int slot(const WindowGeometry& g, int i) { return i + (kMaxSpatialRank - g.rank); }

Status read_dims(const AttrList& attrs, const char* name, size_t count, int64_t fallback, int64_t min,
                 std::vector<int64_t>* out) {
  ETC_ASSIGN_OR_RETURN(*out, attrs.get_ints(name, std::vector<int64_t>(count, fallback)));
  ETC_CHECK_OR_FAIL(out->size() == count, Error::InvalidProgram, "attribute '", name, "' has ",
                    std::to_string(out->size()), " values, expected ", std::to_string(count));
  for (int64_t v : *out)
    ETC_CHECK_OR_FAIL(v >= min && v <= kMaxWindowValue, Error::InvalidProgram, "attribute '", name,
                      "' has invalid value ", std::to_string(v), " (valid: ", std::to_string(min), " to ",
                      std::to_string(kMaxWindowValue), ")");
  return Status::Ok();
}

}  // namespace

Status read_window_attrs(const AttrList& attrs, const Shape& input, bool allow_negative_pads,
                         WindowGeometry* g) {
  const int rank = input.rank() - 2;
  ETC_CHECK_OR_FAIL(rank >= 1 && rank <= kMaxSpatialRank, Error::NotSupported,
                    "supports 1 to 3 spatial dims, input has shape ", input.str());
  *g = WindowGeometry{};
  g->rank = rank;
  std::vector<int64_t> strides, pads, dilations;
  ETC_TRY(read_dims(attrs, "strides", rank, 1, 1, &strides));
  ETC_TRY(read_dims(attrs, "dilations", rank, 1, 1, &dilations));
  ETC_TRY(read_dims(attrs, "pads", 2 * rank, 0, allow_negative_pads ? -kMaxWindowValue : 0, &pads));
  for (int i = 0; i < rank; ++i) {
    const int s = slot(*g, i);
    ETC_CHECK_OR_FAIL(input[i + 2] <= kMaxWindowValue, Error::NotSupported, "spatial dim ", std::to_string(i),
                      " of input shape ", input.str(), " exceeds ", std::to_string(kMaxWindowValue));
    g->in[s] = input[i + 2];
    g->stride[s] = strides[i];
    g->dilation[s] = dilations[i];
    g->pad_begin[s] = pads[i];
    g->pad_end[s] = pads[i + rank];
  }
  return Status::Ok();
}

Status set_window_kernel(Span<const int64_t> dims, WindowGeometry* g) {
  const size_t first = dims.size() - static_cast<size_t>(g->rank);
  for (int i = 0; i < g->rank; ++i) {
    const int64_t k = dims[first + i];
    ETC_CHECK_OR_FAIL(k >= 1 && k <= kMaxWindowValue, Error::InvalidArgument, "kernel dim ",
                      std::to_string(k), " is outside 1 to ", std::to_string(kMaxWindowValue));
    g->kernel[slot(*g, i)] = k;
  }
  return Status::Ok();
}

Shape window_output_shape(const WindowGeometry& g, int64_t batch, int64_t channels) {
  Shape s{batch, channels};
  for (int i = 0; i < g.rank; ++i) s.push_back(g.out[slot(g, i)]);
  return s;
}

}  // namespace etc
