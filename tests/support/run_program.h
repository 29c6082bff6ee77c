#pragma once
// Serializes an ExportedProgram, loads it with the runtime and runs it once:
// the differential harness for passes (same outputs before and after).

#include <cstring>
#include <stdexcept>
#include <vector>

#include "compiler/emit/program_writer.h"
#include "runtime/core/aligned_buffer.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"

namespace etc::testing {

// inputs[i] holds the bytes of graph input i; returns each output's bytes.
inline std::vector<std::vector<uint8_t>> run_program(const ir::ExportedProgram& program,
                                                     const std::vector<std::vector<uint8_t>>& inputs,
                                                     const RuntimeOptions& options = {}) {
  const std::vector<uint8_t> bytes = emit::serialize_program(program);
  // 64-byte aligned, as a mapped file is (constants are read in place).
  AlignedBuffer aligned = AlignedBuffer::allocate(bytes.size());
  if (!aligned) throw std::runtime_error("out of memory");
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  auto loaded = Program::load_from_data(FileData::borrow(aligned.data(), bytes.size()), "test.etp");
  if (!loaded.ok()) throw std::runtime_error(loaded.message());
  auto method = Method::init(loaded.get(), 0, options);
  if (!method.ok()) throw std::runtime_error(method.message());
  Method& m = *method.get();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Status s = m.set_input(i, m.input_spec(i), inputs[i].data());
    if (!s.ok()) throw std::runtime_error(s.message());
  }
  Status s = m.execute();
  if (!s.ok()) throw std::runtime_error(s.message());
  std::vector<std::vector<uint8_t>> outs;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const auto* p = static_cast<const uint8_t*>(m.output(i).data);
    outs.emplace_back(p, p + m.output(i).nbytes());
  }
  return outs;
}

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return {p, p + v.size() * sizeof(T)};
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace etc::testing
