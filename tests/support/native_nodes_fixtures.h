#pragma once
// Fixtures of the XNNPACK native node and stage plan tests: dims, exactly
// representable test values, and a one-shot run of a blob through the
// backend.

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "tests/support/xnnpack_blob_builder.h"

namespace etc::testing::native_nodes {

using Dims = std::vector<uint64_t>;

inline Shape to_shape(const Dims& dims) {
  Shape s;
  for (uint64_t d : dims) s.push_back(static_cast<int64_t>(d));
  return s;
}

inline size_t numel(const Dims& dims) {
  size_t n = 1;
  for (uint64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

// Distinct, exactly representable values: start, start + 0.25, ...
inline std::vector<float> ramp(size_t n, float start = 1) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * static_cast<float>(i);
  return v;
}

// Values in [-4, 4] in steps of 0.5, so clamps bite on both sides.
inline std::vector<float> wave(size_t n, size_t phase = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + phase) % 17) * 0.5f - 4.0f;
  return v;
}

struct Operand {
  Dims dims;
  std::vector<float> data;
};

inline std::vector<float> clamp(std::vector<float> v, float lo, float hi) {
  for (float& x : v) x = x < lo ? lo : (x > hi ? hi : x);
  return v;
}

// Runs `blob` once on `inputs`; returns the outputs (of `out_dims`).
inline std::vector<std::vector<float>> run_blob(const std::vector<uint8_t>& blob,
                                                const std::vector<Operand>& inputs,
                                                const std::vector<Dims>& out_dims, int num_threads = 0) {
  XnnpackRunner runner(num_threads);
  const Status s = runner.init(blob);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<XnnpackArg> args;
  for (const Operand& in : inputs) args.push_back({to_shape(in.dims), in.data});
  for (const Dims& d : out_dims) args.push_back(zeros(to_shape(d)));
  const Status e = runner.execute(args);
  INFO(e.message());
  REQUIRE(e.ok());
  std::vector<std::vector<float>> outs;
  for (size_t o = 0; o < out_dims.size(); ++o) outs.push_back(args[inputs.size() + o].data);
  return outs;
}

}  // namespace etc::testing::native_nodes
