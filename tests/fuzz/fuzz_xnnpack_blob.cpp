// Fuzz target: arbitrary bytes as an XNNPACK delegate blob. A blob the
// backend accepts is also resized (as for a method with an input compiled
// for a range of sizes): every input dim halved, then back to the blob's.
#include <vector>

#include "runtime/backends/xnnpack/blob_reader.h"
#include "tests/fuzz/fuzz_backend_blob.h"

namespace {

void resize_blob(const uint8_t* data, size_t size) {
  using namespace etc;
  const Result<xnnpack::BlobView> view = xnnpack::read_xnnpack_blob(data, size);
  if (!view.ok()) return;
  BackendInterface* backend = get_backend_class("xnnpack");
  RuntimeOptions options;
  options.num_threads = 1;
  BackendInitContext context(nullptr, "forward", &options, /*may_resize=*/true);
  FreeableBuffer processed(data, size);
  auto handle = backend->init(context, &processed, {});
  if (!handle.ok()) return;
  const xnnpack::BlobView& v = view.get();
  std::vector<Tensor> tensors(v.input_tensors.size() + v.output_tensors.size());
  for (int halve = 1; halve >= 0; --halve) {
    for (size_t i = 0; i < v.input_tensors.size(); ++i) {
      const xnnpack::TensorInfo& t = v.tensors[v.input_tensors[i]];
      Shape shape;
      for (size_t d = 0; d < t.rank; ++d)
        shape.push_back(static_cast<int64_t>(halve ? (t.dims[d] + 1) / 2 : t.dims[d]));
      if (t.layout == xnnpack::fb::BoundaryLayout::NchwToNhwc)
        shape = {shape[0], shape[3], shape[1], shape[2]};
      tensors[i].spec = TensorSpec{DType::Float32, shape};
    }
    std::vector<EValue> values;
    for (Tensor& t : tensors) values.emplace_back(&t);
    std::vector<EValue*> args;
    for (EValue& e : values) args.push_back(&e);
    (void)backend->resize(handle.get(), Span<EValue*>(args));
  }
  backend->destroy(handle.get());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etc::fuzz::init_blob("xnnpack", data, size);
  resize_blob(data, size);
  return 0;
}
