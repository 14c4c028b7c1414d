// bench_cpu_pointwise: the cpu backend's elementwise and reduction kernels on large contiguous
// f32 tensors against a plain copy of the same bytes (std::copy, one thread) and the triad
// peak, side by side in one run. Prints time, GB/s and ratio per op.
//   build/bench/bench_cpu_pointwise [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/parallel.h"
#include "crucible/backends/blas_core.h"
#include "crucible/ops/op.h"

using namespace crucible;

namespace {

template <typename Fn>
double best_of(int reps, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  // The right OpenBLAS kernels, as `crucible` has them (backends/cpu/blas_core.h).
  crucible::cpu::restart_with_corrected_blas_core(argv);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  auto cpu = make_cpu_backend();
  if (threads > 0) cpu->set_num_threads(threads);
  const int64_t n = int64_t{1} << 24;
  Tensor x = Tensor::empty({n / 2048, 2048}, DType::Float32);
  float* px = x.data<float>();
  for (int64_t i = 0; i < n; ++i) px[i] = static_cast<float>((i % 1000) - 500) * 0.01f;
  std::vector<float> dst(static_cast<size_t>(n));
  const double copy_s = best_of(5, [&] { std::copy(px, px + n, dst.data()); });
  const double bytes = 8.0 * static_cast<double>(n);
  std::printf("threads %d, %lld f32 elements\n", cpu::num_threads(), static_cast<long long>(n));
  std::printf("%-24s %10.3f ms %8.2f GB/s\n", "std::copy (1 thread)", copy_s * 1e3,
              bytes / copy_s * 1e-9);
  struct Case {
    const char* op;
    Values args;
    double bytes;
  };
  const std::vector<Case> cases = {
      {"aten.relu.default", {Value(x)}, bytes},
      {"aten.gelu.default", {Value(x), Value(std::string("none"))}, bytes},
      {"aten.sigmoid.default", {Value(x)}, bytes},
      {"aten.add.Tensor", {Value(x), Value(x), Value(1.0)}, 12.0 * static_cast<double>(n)},
      {"aten._softmax.default", {Value(x), Value(int64_t{1}), Value(false)}, bytes},
      {"aten.sum.dim_IntList",
       {Value(x), Value(std::vector<int64_t>{1}), Value(false), Value()},
       4.0 * static_cast<double>(n)},
  };
  for (const Case& c : cases) {
    const OpDef& op = OpRegistry::catalog().get(c.op);
    const double s = best_of(5, [&] { (void)cpu->run(op, c.args); });
    std::printf("%-24s %10.3f ms %8.2f GB/s  %.2fx copy time\n", c.op, s * 1e3, c.bytes / s * 1e-9,
                s / copy_s);
  }
  return 0;
}
