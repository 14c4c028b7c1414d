// The cpu backend's mm (f32) against OpenBLAS's cblas_sgemm called directly, square sizes
// 256..2048, timed alternating in one run with the same thread count; prints GFLOP/s and the
// ratio (the backend must reach at least 0.90 of sgemm).
//   build/bench_cpu_gemm_vs_openblas [threads] [reps]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "crucible/backends/blas_core.h"
#include "crucible/ops/op.h"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  // The right OpenBLAS kernels, as `crucible` has them (backends/cpu/blas_core.h).
  crucible::cpu::restart_with_corrected_blas_core(argv);
  using namespace crucible;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  auto cpu = make_cpu_backend();
  if (threads > 0) cpu->set_num_threads(threads);
  const int blas_threads = threads > 0 ? threads : openblas_get_num_threads();
  const OpDef& mm = OpRegistry::catalog().get("aten.mm.default");
  std::printf("threads %d, %d reps per size, median times, OpenBLAS core %s\n", blas_threads, reps,
              cpu::blas_core_name().c_str());
  std::printf("%6s %14s %14s %8s\n", "n", "cpu mm GF/s", "sgemm GF/s", "ratio");
  double worst = 1e9;
  for (int64_t n : {256, 512, 768, 1024, 1536, 2048}) {
    Tensor a = Tensor::empty({n, n}, DType::Float32), b = Tensor::empty({n, n}, DType::Float32);
    float* ap = a.data<float>();
    float* bp = b.data<float>();
    for (int64_t i = 0; i < n * n; ++i) {
      ap[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
      bp[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
    }
    std::vector<float> c(static_cast<size_t>(n * n));
    const Values args{a, b};
    auto run_cpu = [&] { cpu->run(mm, args); };
    auto run_blas = [&] {
      openblas_set_num_threads(blas_threads);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.0f, ap, static_cast<int>(n), bp,
                  static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    };
    run_cpu();  // warm-up
    run_blas();
    const int inner = n <= 512 ? 20 : n <= 1024 ? 4 : 1;
    std::vector<double> tc, tb;
    for (int r = 0; r < reps; ++r) {
      auto t0 = clock_type::now();
      for (int i = 0; i < inner; ++i) run_cpu();
      tc.push_back(seconds_since(t0) / inner);
      t0 = clock_type::now();
      for (int i = 0; i < inner; ++i) run_blas();
      tb.push_back(seconds_since(t0) / inner);
    }
    const double flops =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double gc = flops / median(tc) / 1e9, gb = flops / median(tb) / 1e9;
    worst = std::min(worst, gc / gb);
    std::printf("%6lld %14.1f %14.1f %8.3f\n", static_cast<long long>(n), gc, gb, gc / gb);
  }
  std::printf("worst ratio %.3f (required >= 0.90)\n", worst);
  return 0;
}
