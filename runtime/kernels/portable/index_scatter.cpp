// gather_elements, gather_nd, scatter_elements, scatter_nd. Indices may be
// runtime tensors, so run() checks every index before it writes anything: a
// bad index fails the run with the op, the index and the dim it missed, and
// leaves the output as it was. Scatters with no reduction move bytes (any
// dtype); add, mul, max and min combine typed values in index order.
#include "runtime/kernels/portable/index_scatter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/kernels/portable/dispatch.h"
#include "runtime/kernels/portable/wrapping.h"

namespace etc {
namespace {

using Dims = std::array<int64_t, kMaxRank>;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> reduction_of(const AttrList& attrs) {
  ETC_ASSIGN_OR_RETURN(std::string_view r, attrs.get_string("reduction", "none"));
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return fail(Error::InvalidArgument, "reduction '", std::string(r),
              "' is not one of none, add, mul, max, min");
}

Status check_specs(const AttrList& attrs, const TensorSpec& data, const TensorSpec& indices) {
  ETC_CHECK_OR_FAIL(indices.dtype == DType::Int32 || indices.dtype == DType::Int64, Error::InvalidType,
                    "indices must be int32 or int64, got ", dtype_name(indices.dtype));
  ETC_ASSIGN_OR_RETURN(Reduction r, reduction_of(attrs));
  ETC_CHECK_OR_FAIL(r == Reduction::kNone || data.dtype != DType::Bool, Error::InvalidType,
                    "a reduction needs numbers, got bool data");
  return Status::Ok();
}

int64_t product(const Shape& s, int from, int to) {
  int64_t p = 1;
  for (int d = from; d < to; ++d) p *= s[d];
  return p;
}

// Fails unless every index lies in [-dim, dim). `op` names the kernel.
template <typename I>
Status check_indices(const I* idx, int64_t n, int64_t dim, const char* op) {
  for (int64_t j = 0; j < n; ++j)
    ETC_CHECK_OR_FAIL(idx[j] >= -dim && idx[j] < dim, Error::OutOfRange, op, ": index ",
                      std::to_string(idx[j]), " is out of range for a dim of ", std::to_string(dim));
  return Status::Ok();
}

// Index tuples (the last dim of `idx`, k wide): entry t must lie in [-dims[t], dims[t]).
template <typename I>
Status check_tuples(const I* idx, int64_t tuples, int64_t k, const Dims& dims, const char* op) {
  for (int64_t j = 0; j < tuples; ++j)
    for (int64_t t = 0; t < k; ++t) {
      const int64_t i = idx[j * k + t], dim = dims[static_cast<size_t>(t)];
      ETC_CHECK_OR_FAIL(i >= -dim && i < dim, Error::OutOfRange, op, ": index ", std::to_string(i),
                        " (entry ", std::to_string(t), " of index tuple ", std::to_string(j),
                        ") is out of range for a dim of ", std::to_string(dim));
    }
  return Status::Ok();
}

// Walks the positions of `shape` in row-major order, keeping the offset
// sum(coord[d] * strides[d]) of the current position.
class Walker {
 public:
  Walker(const Shape& shape, const Dims& strides) : shape_(shape), strides_(strides) {}
  int64_t offset() const { return offset_; }
  void next() {
    for (int d = shape_.rank() - 1; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      offset_ += strides_[u];
      if (++coord_[u] < shape_[d]) return;
      offset_ -= strides_[u] * shape_[d];
      coord_[u] = 0;
    }
  }

 private:
  Shape shape_;
  Dims strides_;
  Dims coord_{};
  int64_t offset_ = 0;
};

template <typename T>
void combine(T& into, T value, Reduction r) {
  switch (r) {
    case Reduction::kNone: into = value; break;
    case Reduction::kAdd: into = wrap_add(into, value); break;
    case Reduction::kMul: into = wrap_mul(into, value); break;
    case Reduction::kMax: into = std::max(into, value); break;
    case Reduction::kMin: into = std::min(into, value); break;
  }
}

// Runs fn.template operator()<I>() for the kernel's index dtype.
template <typename F>
Status with_index_type(DType dtype, F&& fn) {
  if (dtype == DType::Int32) return fn.template operator()<int32_t>();
  return fn.template operator()<int64_t>();
}

// ---- gather_elements, scatter_elements ----

// Positions of the indices tensor map to data offsets: the position's own
// coordinates on every dim but the axis, the index on the axis.
struct ElementsGeometry {
  Shape indices;
  Dims walk_strides{};  // data strides, the axis's set to 0
  int64_t axis_dim = 0, axis_stride = 0;
  size_t elem = 0;
};

ElementsGeometry elements_geometry(const TensorSpec& data, const TensorSpec& indices, int64_t axis) {
  ElementsGeometry g;
  g.indices = indices.shape;
  g.walk_strides = strides_of(data.shape);
  const auto a = static_cast<size_t>(axis);
  g.axis_dim = data.shape[static_cast<int>(axis)];
  g.axis_stride = g.walk_strides[a];
  g.walk_strides[a] = 0;
  g.elem = dtype_size(data.dtype);
  return g;
}

Status check_elements_specs(const AttrList& attrs, const TensorSpec& data, const TensorSpec& indices,
                            int64_t& axis) {
  ETC_TRY(check_specs(attrs, data, indices));
  ETC_ASSIGN_OR_RETURN(axis, attrs.get_int("axis"));
  const Shape& d = data.shape;
  const Shape& i = indices.shape;
  ETC_TRY(check_min_rank(d, 1, "data"));
  ETC_CHECK_OR_FAIL(axis >= 0 && axis < d.rank(), Error::InvalidArgument, "axis ", std::to_string(axis),
                    " is out of range for rank ", std::to_string(d.rank()));
  ETC_CHECK_OR_FAIL(i.rank() == d.rank(), Error::InvalidShape, "indices ", i.str(), " and data ", d.str(),
                    " must have the same rank");
  for (int k = 0; k < d.rank(); ++k)
    ETC_CHECK_OR_FAIL(k == axis || i[k] <= d[k], Error::InvalidShape, "indices ", i.str(),
                      " is larger than data ", d.str(), " on dim ", std::to_string(k));
  return Status::Ok();
}

class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(ElementsGeometry g, DType index_dtype) : g_(std::move(g)), index_dtype_(index_dtype) {}

  Status run(const KernelArgs& args) override {
    return with_index_type(index_dtype_, [&]<typename I>() -> Status {
      const I* idx = args.inputs[1]->data_as<const I>();
      const int64_t n = g_.indices.numel();
      ETC_TRY(check_indices(idx, n, g_.axis_dim, "gather_elements"));
      const auto* src = static_cast<const uint8_t*>(args.inputs[0]->data);
      auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
      Walker w(g_.indices, g_.walk_strides);
      for (int64_t p = 0; p < n; ++p, w.next()) {
        const int64_t i = idx[p] < 0 ? idx[p] + g_.axis_dim : idx[p];
        std::memcpy(dst + static_cast<size_t>(p) * g_.elem,
                    src + static_cast<size_t>(w.offset() + i * g_.axis_stride) * g_.elem, g_.elem);
      }
      return Status::Ok();
    });
  }

 private:
  ElementsGeometry g_;
  DType index_dtype_;
};

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(ElementsGeometry g, DType dtype, DType index_dtype, Reduction r, size_t data_bytes)
      : g_(std::move(g)), dtype_(dtype), index_dtype_(index_dtype), r_(r), data_bytes_(data_bytes) {}

  Status run(const KernelArgs& args) override {
    return with_index_type(index_dtype_, [&]<typename I>() -> Status {
      const I* idx = args.inputs[1]->data_as<const I>();
      ETC_TRY(check_indices(idx, g_.indices.numel(), g_.axis_dim, "scatter_elements"));
      const void* data = args.inputs[0]->data;
      void* out = args.outputs[0]->data;
      if (out != data) std::memcpy(out, data, data_bytes_);
      if (r_ == Reduction::kNone) {
        scatter<uint8_t>(idx, args.inputs[2]->data, out, g_.elem);
        return Status::Ok();
      }
      return dispatch_arith(dtype_, [&]<typename T>() {
        scatter<T>(idx, args.inputs[2]->data, out, 1);
        return Status::Ok();
      });
    });
  }

 private:
  // T: the element type, or uint8_t moving `width` bytes per element.
  template <typename T, typename I>
  void scatter(const I* idx, const void* updates, void* out, size_t width) const {
    const T* upd = static_cast<const T*>(updates);
    T* dst = static_cast<T*>(out);
    const int64_t n = g_.indices.numel();
    Walker w(g_.indices, g_.walk_strides);
    for (int64_t p = 0; p < n; ++p, w.next()) {
      const int64_t i = idx[p] < 0 ? idx[p] + g_.axis_dim : idx[p];
      const auto at = static_cast<size_t>(w.offset() + i * g_.axis_stride) * width;
      if constexpr (std::is_same_v<T, uint8_t>)
        std::memcpy(dst + at, upd + static_cast<size_t>(p) * width, width);
      else
        combine(dst[at], upd[p], r_);
    }
  }

  ElementsGeometry g_;
  DType dtype_, index_dtype_;
  Reduction r_;
  size_t data_bytes_;
};

// ---- gather_nd, scatter_nd ----

// indices [..., k]: each tuple of its last dim picks a slice of `slice`
// elements from the data (after `batch_dims` leading dims both share).
struct TupleGeometry {
  int64_t batches = 1;       // product of the batch dims
  int64_t batch_stride = 0;  // data elements per batch
  int64_t tuples = 0;        // index tuples per batch
  int64_t k = 0;
  int64_t slice = 1;       // elements each tuple selects
  Dims dims{}, strides{};  // per tuple entry: its data dim and its stride in elements
  size_t elem = 0;
};

TupleGeometry tuple_geometry(const TensorSpec& data, const TensorSpec& indices, int64_t batch_dims) {
  const Shape& d = data.shape;
  const Shape& q = indices.shape;
  const int b = static_cast<int>(batch_dims);
  TupleGeometry g;
  g.k = q.dim(-1);
  const int k = static_cast<int>(g.k);
  g.batches = product(d, 0, b);
  g.batch_stride = product(d, b, d.rank());
  g.tuples = product(q, b, q.rank() - 1);
  g.slice = product(d, b + k, d.rank());
  for (int t = 0; t < k; ++t) {
    g.dims[static_cast<size_t>(t)] = d[b + t];
    g.strides[static_cast<size_t>(t)] = product(d, b + t + 1, d.rank());
  }
  g.elem = dtype_size(data.dtype);
  return g;
}

// The data offset of tuple `tuple` (entries already checked).
template <typename I>
int64_t tuple_offset(const TupleGeometry& g, const I* tuple) {
  int64_t at = 0;
  for (int64_t t = 0; t < g.k; ++t) {
    const auto u = static_cast<size_t>(t);
    const int64_t i = tuple[t] < 0 ? tuple[t] + g.dims[u] : tuple[t];
    at += i * g.strides[u];
  }
  return at;
}

Status check_tuple_specs(const AttrList& attrs, const TensorSpec& data, const TensorSpec& indices,
                         int64_t batch_dims) {
  ETC_TRY(check_specs(attrs, data, indices));
  const Shape& d = data.shape;
  const Shape& q = indices.shape;
  ETC_TRY(check_min_rank(d, 1, "data"));
  ETC_TRY(check_min_rank(q, 1, "indices"));
  ETC_CHECK_OR_FAIL(batch_dims >= 0 && batch_dims < std::min(d.rank(), q.rank()), Error::InvalidArgument,
                    "batch_dims ", std::to_string(batch_dims), " must be below the ranks of data ", d.str(),
                    " and indices ", q.str());
  for (int b = 0; b < batch_dims; ++b)
    ETC_CHECK_OR_FAIL(d[b] == q[b], Error::InvalidShape, "data ", d.str(), " and indices ", q.str(),
                      " differ on batch dim ", std::to_string(b));
  const int64_t k = q.dim(-1);
  ETC_CHECK_OR_FAIL(k >= 1 && k <= d.rank() - batch_dims, Error::InvalidShape, "the last dim of indices ",
                    q.str(), " must be in [1, ", std::to_string(d.rank() - batch_dims), "] for data ",
                    d.str());
  return Status::Ok();
}

class GatherNdKernel final : public Kernel {
 public:
  GatherNdKernel(TupleGeometry g, DType index_dtype) : g_(g), index_dtype_(index_dtype) {}

  Status run(const KernelArgs& args) override {
    return with_index_type(index_dtype_, [&]<typename I>() -> Status {
      const I* idx = args.inputs[1]->data_as<const I>();
      ETC_TRY(check_tuples(idx, g_.batches * g_.tuples, g_.k, g_.dims, "gather_nd"));
      const auto* src = static_cast<const uint8_t*>(args.inputs[0]->data);
      auto* dst = static_cast<uint8_t*>(args.outputs[0]->data);
      const size_t slice_bytes = static_cast<size_t>(g_.slice) * g_.elem;
      for (int64_t b = 0; b < g_.batches; ++b)
        for (int64_t j = 0; j < g_.tuples; ++j, idx += g_.k, dst += slice_bytes) {
          const int64_t at = b * g_.batch_stride + tuple_offset(g_, idx);
          std::memcpy(dst, src + static_cast<size_t>(at) * g_.elem, slice_bytes);
        }
      return Status::Ok();
    });
  }

 private:
  TupleGeometry g_;
  DType index_dtype_;
};

class ScatterNdKernel final : public Kernel {
 public:
  ScatterNdKernel(TupleGeometry g, DType dtype, DType index_dtype, Reduction r)
      : g_(g), dtype_(dtype), index_dtype_(index_dtype), r_(r) {}

  Status run(const KernelArgs& args) override {
    return with_index_type(index_dtype_, [&]<typename I>() -> Status {
      const I* idx = args.inputs[1]->data_as<const I>();
      ETC_TRY(check_tuples(idx, g_.tuples, g_.k, g_.dims, "scatter_nd"));
      const void* data = args.inputs[0]->data;
      void* out = args.outputs[0]->data;
      if (out != data) std::memcpy(out, data, static_cast<size_t>(g_.batch_stride) * g_.elem);
      const size_t slice_bytes = static_cast<size_t>(g_.slice) * g_.elem;
      const auto* upd = static_cast<const uint8_t*>(args.inputs[2]->data);
      auto* dst = static_cast<uint8_t*>(out);
      if (r_ == Reduction::kNone) {
        for (int64_t j = 0; j < g_.tuples; ++j)
          std::memcpy(dst + static_cast<size_t>(tuple_offset(g_, idx + j * g_.k)) * g_.elem,
                      upd + static_cast<size_t>(j) * slice_bytes, slice_bytes);
        return Status::Ok();
      }
      return dispatch_arith(dtype_, [&]<typename T>() {
        const T* u = reinterpret_cast<const T*>(upd);
        T* o = reinterpret_cast<T*>(dst);
        for (int64_t j = 0; j < g_.tuples; ++j, u += g_.slice) {
          T* slice = o + tuple_offset(g_, idx + j * g_.k);
          for (int64_t s = 0; s < g_.slice; ++s) combine(slice[s], u[s], r_);
        }
        return Status::Ok();
      });
    });
  }

 private:
  TupleGeometry g_;
  DType dtype_, index_dtype_;
  Reduction r_;
};

}  // namespace

Status infer_gather_elements(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  int64_t axis = 0;
  ETC_TRY(check_elements_specs(attrs, in[0], in[1], axis));
  out[0] = TensorSpec{in[0].dtype, in[1].shape};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_gather_elements(const AttrList& attrs, Span<const TensorSpec> in,
                                                       Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  return std::unique_ptr<Kernel>(
      std::make_unique<GatherElementsKernel>(elements_geometry(in[0], in[1], axis), in[1].dtype));
}

Status infer_scatter_elements(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  int64_t axis = 0;
  ETC_TRY(check_elements_specs(attrs, in[0], in[1], axis));
  ETC_CHECK_OR_FAIL(in[2].dtype == in[0].dtype && in[2].shape == in[1].shape, Error::InvalidShape, "updates ",
                    dtype_name(in[2].dtype), in[2].shape.str(), " must be ", dtype_name(in[0].dtype),
                    in[1].shape.str(), " (data's dtype, indices' shape)");
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_scatter_elements(const AttrList& attrs, Span<const TensorSpec> in,
                                                        Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t axis, attrs.get_int("axis"));
  ETC_ASSIGN_OR_RETURN(Reduction r, reduction_of(attrs));
  const size_t bytes = static_cast<size_t>(in[0].shape.numel()) * dtype_size(in[0].dtype);
  return std::unique_ptr<Kernel>(std::make_unique<ScatterElementsKernel>(
      elements_geometry(in[0], in[1], axis), in[0].dtype, in[1].dtype, r, bytes));
}

Status infer_gather_nd(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_ASSIGN_OR_RETURN(int64_t b, attrs.get_int("batch_dims", 0));
  ETC_TRY(check_tuple_specs(attrs, in[0], in[1], b));
  const Shape& d = in[0].shape;
  const Shape& q = in[1].shape;
  const int64_t k = q.dim(-1);
  ETC_CHECK_OR_FAIL(q.rank() - 1 + d.rank() - b - k <= kMaxRank, Error::InvalidShape,
                    "output rank is above the maximum of 8");
  Shape s;
  for (int i = 0; i < q.rank() - 1; ++i) s.push_back(q[i]);
  for (int i = static_cast<int>(b + k); i < d.rank(); ++i) s.push_back(d[i]);
  out[0] = TensorSpec{in[0].dtype, s};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_gather_nd(const AttrList& attrs, Span<const TensorSpec> in,
                                                 Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(int64_t b, attrs.get_int("batch_dims", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<GatherNdKernel>(tuple_geometry(in[0], in[1], b), in[1].dtype));
}

Status infer_scatter_nd(const AttrList& attrs, Span<const TensorSpec> in, Span<TensorSpec> out) {
  ETC_TRY(check_tuple_specs(attrs, in[0], in[1], 0));
  const Shape& d = in[0].shape;
  const Shape& q = in[1].shape;
  Shape want;
  for (int i = 0; i < q.rank() - 1; ++i) want.push_back(q[i]);
  for (int i = static_cast<int>(q.dim(-1)); i < d.rank(); ++i) {
    ETC_CHECK_OR_FAIL(want.rank() < kMaxRank, Error::InvalidShape, "updates rank is above the maximum of 8");
    want.push_back(d[i]);
  }
  ETC_CHECK_OR_FAIL(in[2].dtype == in[0].dtype && in[2].shape == want, Error::InvalidShape, "updates ",
                    dtype_name(in[2].dtype), in[2].shape.str(), " must be ", dtype_name(in[0].dtype),
                    want.str(), " for data ", d.str(), " and indices ", q.str());
  out[0] = in[0];
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> create_scatter_nd(const AttrList& attrs, Span<const TensorSpec> in,
                                                  Span<const TensorSpec>) {
  ETC_ASSIGN_OR_RETURN(Reduction r, reduction_of(attrs));
  return std::unique_ptr<Kernel>(
      std::make_unique<ScatterNdKernel>(tuple_geometry(in[0], in[1], 0), in[0].dtype, in[1].dtype, r));
}

}  // namespace etc
