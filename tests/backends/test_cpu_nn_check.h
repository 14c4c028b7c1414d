// Shared by the cpu backend's nn and matmul tests: runs one call on the `cpu` backend and on
// the reference, on separate copies of the arguments, and compares every tensor output (and
// every argument the op mutates) with the op's own tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::cpu_test {

// Deterministic values in [-2, 2) with a few repeats, written in logical order.
inline Tensor filled(const Shape& shape, DType dt, int seed = 1) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009) / 250.0, 4.0) - 2.0);
  return t;
}

// The outputs of `op` on `args` from the cpu backend (with `threads` threads) and the
// reference agree; returns the cpu outputs.
inline Values expect_matches_ref(const std::string& op_name, const Values& args, int threads = 2) {
  const OpDef& op = OpRegistry::catalog().get(op_name);
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(threads);
  Values ref_args = deep_copy(args), cpu_args = deep_copy(args);
  const Values ref = op.run_ref(ref_args);
  const Values got = cpu->run(op, cpu_args);
  const double scale = op.compare.tol_scale ? std::max(1.0, op.compare.tol_scale(args)) : 1.0;
  EXPECT_EQ(ref.size(), got.size()) << op_name;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    if (!ref[i].is_tensor()) continue;
    const TensorCheck c = compare_tensors(ref[i].tensor(), got[i].tensor(), scale,
                                          op_name + " output " + std::to_string(i));
    EXPECT_TRUE(c.passed) << c.reason;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor()) continue;
    const TensorCheck c = compare_tensors(ref_args[i].tensor(), cpu_args[i].tensor(), scale,
                                          op_name + " argument " + std::to_string(i));
    EXPECT_TRUE(c.passed) << c.reason;
  }
  return got;
}

}  // namespace crucible::cpu_test
