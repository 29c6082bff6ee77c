// Portable kernels on the method's threads (Kernel::wants_threads,
// KernelArgs::pool): a method whose LSTM has a large packed product shares
// the process's pool for its thread count, and runs to the one-thread bytes.
#include <catch2/catch.hpp>
#include <random>

#include "compiler/emit/program_writer.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/core/task_pool.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/graph_builder.h"
#include "tests/support/random.h"
#include "tests/support/run_program.h"

using namespace etc;
using etc::testing::GraphBuilder;
using etc::testing::random_floats;

namespace {

// X [8, 1, 32] -> lstm (hidden `hidden`, forward) -> Y, weights constant.
ir::ExportedProgram lstm_program(int64_t hidden) {
  std::mt19937 rng(3);
  GraphBuilder b;
  const ir::ValueId x = b.input("x", DType::Float32, {8, 1, 32});
  const ir::ValueId w = b.constant_f32("w", {1, 4 * hidden, 32},
                                       random_floats(static_cast<size_t>(4 * hidden * 32), rng, -0.1f, 0.1f));
  const ir::ValueId r =
      b.constant_f32("r", {1, 4 * hidden, hidden},
                     random_floats(static_cast<size_t>(4 * hidden * hidden), rng, -0.1f, 0.1f));
  b.output(b.op(EdgeOp::Lstm, {x, w, r}, {{"hidden_size", hidden}}), "y");
  return b.build();
}

}  // namespace

TEST_CASE("a method takes a pool for kernels that ask for threads, and runs to the same bytes",
          "[threads][rnn]") {
  std::mt19937 rng(5);
  const std::vector<std::vector<uint8_t>> inputs{testing::as_bytes(random_floats(8 * 32, rng))};
  for (int64_t hidden : {40, 256}) {
    INFO("hidden " << hidden);
    const ir::ExportedProgram p = lstm_program(hidden);
    const auto one = testing::run_program(p, inputs, RuntimeOptions{1});
    CHECK(testing::run_program(p, inputs, RuntimeOptions{2}) == one);

    const std::vector<uint8_t> bytes = emit::serialize_program(p);
    AlignedBuffer aligned = AlignedBuffer::allocate(bytes.size());
    REQUIRE(aligned);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    auto program = Program::load_from_data(FileData::borrow(aligned.data(), bytes.size()), "lstm.etp");
    REQUIRE(program.ok());
    const size_t before = SharedTaskPool::live_count();
    {
      auto m = Method::init(program.get(), 0, RuntimeOptions{2});
      REQUIRE(m.ok());
      // Hidden 256: R's 4 x 256 x 256 floats are worth two threads; hidden
      // 40's are not.
      const bool threaded = hidden == 256;
      CHECK(SharedTaskPool::live_count() == before + (threaded ? 1 : 0));
    }
    CHECK(SharedTaskPool::live_count() == before);
  }
}
