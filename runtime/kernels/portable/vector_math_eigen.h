#pragma once
// The Eigen body of vector_math (vector_math.h), included by exactly
// vector_math.cpp (baseline ISA) and vector_math_avx512.cpp, which renames
// the Eigen namespace first so that no AVX-512 instantiation can stand in
// for a baseline one at link time (as gemm_eigen.h).

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

#include "runtime/kernels/portable/vector_math.h"

namespace etc {
namespace {

void vector_math_eigen(VectorFn f, const float* in, float* out, int64_t n) {
  using ConstArray = Eigen::Map<const Eigen::ArrayXf>;
  using Array = Eigen::Map<Eigen::ArrayXf>;
  const ConstArray x(in, static_cast<Eigen::Index>(n));
  Array y(out, static_cast<Eigen::Index>(n));
  switch (f) {
    case VectorFn::Tanh: y = x.tanh(); break;
    case VectorFn::Sigmoid: y = 0.5f + 0.5f * (0.5f * x).tanh(); break;
    case VectorFn::Erf: y = x.erf(); break;
    case VectorFn::Exp: y = x.exp(); break;
    case VectorFn::Log: y = x.log(); break;
    case VectorFn::Gelu: y = 0.5f * x * (1.0f + (x * float(M_SQRT1_2)).erf()); break;
    case VectorFn::GeluTanh:
      y = 0.5f * x * (1.0f + (0.7978845608f * (x + 0.044715f * x.cube())).tanh());
      break;
    case VectorFn::Reciprocal: y = x.inverse(); break;
    case VectorFn::Softplus: y = x.max(0.0f) + (-x.abs()).exp().log1p(); break;
  }
}

}  // namespace
}  // namespace etc
