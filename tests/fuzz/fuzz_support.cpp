#include "tests/fuzz/fuzz_support.h"

#include <vector>

#include "runtime/backend/options.h"
#include "runtime/executor/method.h"

namespace etc::fuzz {

bool init_and_run(const Program& program, const uint8_t* fill, size_t fill_size, const RunBudget& budget,
                  std::string* why) {
  for (int plan = 0; plan < program.num_plans(); ++plan) {
    RuntimeOptions options;
    options.num_threads = 1;
    options.max_loop_iterations = 1 << 12;  // a loop's trip count comes from the fuzzed bytes
    auto method = Method::init(program, plan, options);
    if (!method.ok()) {
      *why = method.message();
      return false;
    }
    Method& m = *method.get();
    int64_t elements = 0;
    for (size_t i = 0; i < m.num_inputs(); ++i) elements += m.input_spec(i).shape.numel();
    if (elements > budget.max_input_elements) continue;
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < m.num_inputs(); ++i) {
      const TensorSpec& spec = m.input_spec(i);
      bytes.assign(spec.nbytes(), 0);
      const uint8_t mask = spec.dtype == DType::Bool ? 1 : 0xff;  // a bool byte must be 0 or 1
      for (size_t b = 0; fill_size && b < bytes.size(); ++b) bytes[b] = fill[b % fill_size] & mask;
      if (!m.set_input(i, spec, bytes.data()).ok()) std::abort();  // its own spec must be accepted
    }
    (void)m.execute();  // may fail (e.g. an index out of range): must not crash
  }
  return true;
}

}  // namespace etc::fuzz
