// Load-time delegates (runtime/delegate/delegate.h): a test delegate that
// claims only Relu goes through init, build, prepare, execute and resize;
// init saying NotSupported leaves the portable kernels; illegal replacements
// are refused naming the kernels.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "compiler/emit/program_writer.h"
#include "runtime/delegate/delegate.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/onnx_builder.h"

namespace etc {
namespace {

using namespace testing::onnx_builder;

struct Counts {
  int prepared = 0, executed = 0, resized = 0;
};

class ReluKernel : public DelegateKernel {
 public:
  ReluKernel(KernelRange range, Counts& counts)
      : DelegateKernel(range.inputs, range.outputs), counts_(counts) {}
  Status prepare() override {
    ++counts_.prepared;
    return Status::Ok();
  }
  Status execute() override {
    ++counts_.executed;
    const Tensor& x = *inputs()[0];
    Tensor& y = *outputs()[0];
    for (int64_t i = 0; i < x.numel(); ++i)
      y.data_as<float>()[i] = std::max(x.data_as<const float>()[i], 0.0f);
    return Status::Ok();
  }
  Status resize() override {
    ++counts_.resized;
    return inputs()[0]->spec == outputs()[0]->spec ? Status::Ok()
                                                   : fail(Error::Internal, "relu: shapes differ");
  }

 private:
  Counts& counts_;
};

// Claims every Relu, one range each; `init_status` is what init says, and
// `build_hook` (when set) replaces the build.
class ReluDelegate : public Delegate {
 public:
  Status init_status = Status::Ok();
  std::function<Status(DelegateModel&)> build_hook;
  Counts counts;

  std::string_view name() const override { return "relu_only"; }
  Status init() override { return init_status; }
  Status build(DelegateModel& model) override {
    if (build_hook) return build_hook(model);
    for (size_t k = 0; k < model.num_kernels(); ++k) {
      const KernelView& kernel = model.kernel(k);
      if (kernel.kind != KernelKind::kPortable || kernel.op != EdgeOp::Relu) continue;
      ETC_ASSIGN_OR_RETURN(KernelRange range, model.range(k, k + 1));
      ETC_TRY(model.replace(k, k + 1, std::make_unique<ReluKernel>(range, counts)));
    }
    return Status::Ok();
  }
};

// x [n, 3] -> sin -> relu -> cos -> relu -> y, n 2 (or 1..4 with `ranged`).
std::vector<uint8_t> program_bytes(bool ranged) {
  onnx::ModelProto m = model_with_input();
  for (auto* v : {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_output(0)})
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("n");
  onnx::GraphProto* g = m.mutable_graph();
  add_node(g, "Sin", {"x"}, {"a"}, "sine");
  add_node(g, "Relu", {"a"}, {"b"}, "relu_1");
  add_node(g, "Cos", {"b"}, {"c"}, "cosine");
  add_node(g, "Relu", {"c"}, {"y"}, "relu_2");
  onnx_import::ImportOptions options;
  options.input_shapes["x"] = ranged ? Shape{4, 3} : Shape{2, 3};
  if (ranged) options.input_min_shapes["x"] = Shape{1, 3};
  return emit::serialize_program(compile_onnx(save(m, "runtime_delegate"), options));
}

struct Loaded {
  std::vector<uint8_t> bytes;
  Program program;
};

std::unique_ptr<Loaded> load(bool ranged = false) {
  auto l = std::make_unique<Loaded>();
  l->bytes = program_bytes(ranged);
  auto program = Program::load_from_data(FileData::borrow(l->bytes.data(), l->bytes.size()), "delegated.etp");
  REQUIRE(program.ok());
  l->program = std::move(program).get();
  return l;
}

std::vector<float> run(Method& m, const std::vector<float>& x) {
  Shape shape{static_cast<int64_t>(x.size() / 3), 3};
  REQUIRE(m.resize_input(0, shape).ok());
  REQUIRE(m.set_input(0, TensorSpec{DType::Float32, shape}, x.data()).ok());
  REQUIRE(m.execute().ok());
  const auto* p = static_cast<const float*>(m.output(0).data);
  return {p, p + m.output(0).numel()};
}

std::vector<float> expected(const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(std::max(std::cos(std::max(std::sin(v), 0.0f)), 0.0f));
  return y;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
}

const std::vector<float> kX{-1.5f, -0.5f, 0.0f, 0.5f, 2.0f, 3.5f};

// The program initialised with `delegate`, which claims both Relus.
std::unique_ptr<Method> init_claiming_both(const Loaded& l, Delegate& delegate) {
  RuntimeOptions options;
  options.delegate = &delegate;
  auto method = Method::init(l.program, 0, options);
  REQUIRE(method.ok());
  REQUIRE(method.get()->delegated_ranges().size() == 2);
  return std::move(method).get();
}

}  // namespace

TEST_CASE("a load-time delegate replaces the kernels it claims", "[runtime_delegate]") {
  const auto l = load();
  ReluDelegate delegate;
  const std::unique_ptr<Method> method = init_claiming_both(*l, delegate);
  Method& m = *method;
  CHECK(m.delegated_ranges()[0].from == 1);
  CHECK(m.delegated_ranges()[1].from == 3);
  CHECK(m.delegate_not_used().empty());
  CHECK(delegate.counts.prepared == 2);
  check_close(run(m, kX), expected(kX));
  check_close(run(m, kX), expected(kX));
  CHECK(delegate.counts.executed == 4);
}

TEST_CASE("a load-time delegate whose init is not supported leaves the portable kernels",
          "[runtime_delegate]") {
  const auto l = load();
  ReluDelegate delegate;
  delegate.init_status = fail(Error::NotSupported, "no relu unit on this device");
  RuntimeOptions options;
  options.delegate = &delegate;
  auto method = Method::init(l->program, 0, options);
  REQUIRE(method.ok());
  CHECK(method.get()->delegated_ranges().empty());
  CHECK(method.get()->delegate_not_used() == "no relu unit on this device");
  check_close(run(*method.get(), kX), expected(kX));
  CHECK(delegate.counts.executed == 0);
  // Any other init failure fails the method, naming the delegate.
  delegate.init_status = fail(Error::DelegateUnavailable, "the relu unit is busy");
  auto failed = Method::init(l->program, 0, options);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.message(), Catch::Contains("'relu_only'") && Catch::Contains("the relu unit is busy"));
}

TEST_CASE("a load-time delegate may replace nothing", "[runtime_delegate]") {
  const auto l = load();
  ReluDelegate delegate;
  delegate.build_hook = [](DelegateModel& model) {
    CHECK(model.num_kernels() == 4);
    CHECK(model.kernel(0).op == EdgeOp::Sin);
    CHECK(model.kernel(1).op == EdgeOp::Relu);
    CHECK(model.inputs().size() == 1);
    CHECK(model.outputs().size() == 1);
    return Status::Ok();
  };
  RuntimeOptions options;
  options.delegate = &delegate;
  auto method = Method::init(l->program, 0, options);
  REQUIRE(method.ok());
  CHECK(method.get()->delegated_ranges().empty());
  check_close(run(*method.get(), kX), expected(kX));
}

TEST_CASE("illegal replacements are refused naming the kernels", "[runtime_delegate]") {
  const auto l = load();
  ReluDelegate delegate;
  Counts counts;
  delegate.build_hook = [&](DelegateModel& model) {
    // Past the list, and empty.
    CHECK_THAT(model.range(3, 5).message(), Catch::Contains("not within the 4 kernels"));
    CHECK_THAT(model.range(2, 2).message(), Catch::Contains("not within"));
    // A kernel that reads less than the range: sin's input is missing.
    auto range = model.range(0, 2);
    REQUIRE(range.ok());
    CHECK(range->inputs.size() == 1);
    CHECK(range->outputs.size() == 1);  // b: read by cosine; a stays inside
    Status s = model.replace(0, 2, std::make_unique<ReluKernel>(KernelRange{{}, range->outputs}, counts));
    CHECK_THAT(s.message(), Catch::Contains("kernels 0..1") && Catch::Contains("break a data dependency"));
    // A kernel that does not produce a value read after the range.
    s = model.replace(0, 2, std::make_unique<ReluKernel>(KernelRange{range->inputs, {}}, counts));
    CHECK_THAT(s.message(), Catch::Contains("read after it"));
    // Overlapping ranges would not run contiguously.
    REQUIRE(model.replace(1, 2, std::make_unique<ReluKernel>(model.range(1, 2).get(), counts)).ok());
    s = model.replace(0, 3, std::make_unique<ReluKernel>(KernelRange{}, counts));
    CHECK_THAT(s.message(), Catch::Contains("overlap kernel 1") && Catch::Contains("contiguous"));
    return Status::Ok();
  };
  RuntimeOptions options;
  options.delegate = &delegate;
  auto method = Method::init(l->program, 0, options);
  REQUIRE(method.ok());
  REQUIRE(method.get()->delegated_ranges().size() == 1);
  check_close(run(*method.get(), kX), expected(kX));
  // A build that fails fails the method, naming the delegate.
  delegate.build_hook = [](DelegateModel& model) { return model.replace(0, 1, nullptr); };
  auto failed = Method::init(l->program, 0, options);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.message(), Catch::Contains("'relu_only'") && Catch::Contains("no kernel"));
}

TEST_CASE("a load-time delegate's kernels resize with the program", "[runtime_delegate]") {
  const auto l = load(/*ranged=*/true);
  ReluDelegate delegate;
  const std::unique_ptr<Method> method = init_claiming_both(*l, delegate);
  Method& m = *method;
  const std::vector<float> one{-1.0f, 0.25f, 3.0f};
  check_close(run(m, one), expected(one));
  CHECK(delegate.counts.resized == 2);
  check_close(run(m, kX), expected(kX));
  CHECK(delegate.counts.resized == 4);
  CHECK(m.output(0).spec.shape == Shape{2, 3});
}

}  // namespace etc
