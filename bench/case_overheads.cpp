// What crucible itself spends on every element of a large case, side by side with the
// one-element-at-a-time forms it replaced: drawing normal inputs (Rng::normal per element
// against Rng::normals), widening f16 to double (half_to_float per element against
// half_to_double_n), and comparing two f16 outputs (compare_tensors; absolute time).
//
//   bench_case_overheads [--elements N] [--turns T]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_util.h"
#include "crucible/compare/compare.h"
#include "crucible/core/half.h"
#include "crucible/core/half_bulk.h"
#include "crucible/core/rng.h"
#include "crucible/core/tensor.h"

using namespace crucible;

namespace {

template <typename Fn>
double seconds(Fn fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

volatile double g_sink = 0;  // keeps the results alive

}  // namespace

int main(int argc, char** argv) {
  size_t n = size_t{1} << 24;
  int turns = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--elements")
      n = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--turns")
      turns = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s (--elements N, --turns T)\n", flag.c_str());
      return 2;
    }
  }
  if (n == 0 || turns <= 0) {
    std::fprintf(stderr, "--elements and --turns must be positive\n");
    return 2;
  }
  std::vector<double> out(n);
  std::vector<uint16_t> halves(n);
  for (size_t i = 0; i < n; ++i) halves[i] = static_cast<uint16_t>(i * 7919 % 0x7C00);
  std::vector<double> one_normal, bulk_normal, one_half, bulk_half, compare;
  const Tensor a = Tensor::empty({static_cast<int64_t>(n)}, DType::Float16);
  const Tensor b = Tensor::empty({static_cast<int64_t>(n)}, DType::Float16);
  std::copy(halves.begin(), halves.end(), static_cast<uint16_t*>(a.data_ptr()));
  std::copy(halves.begin(), halves.end(), static_cast<uint16_t*>(b.data_ptr()));
  static_cast<uint16_t*>(b.data_ptr())[n / 2] ^= 1;  // one element differs by an ulp
  for (int t = 0; t < turns; ++t) {                  // alternating, so drift hits both sides alike
    one_normal.push_back(seconds([&] {
      Rng r(1, 2);
      for (size_t i = 0; i < n; ++i) out[i] = r.normal();
    }));
    g_sink = out[n - 1];
    bulk_normal.push_back(seconds([&] {
      Rng r(1, 2);
      r.normals(out.data(), n);
    }));
    g_sink = out[n - 1];
    one_half.push_back(seconds([&] {
      for (size_t i = 0; i < n; ++i) out[i] = half_to_float(halves[i]);
    }));
    g_sink = out[n - 1];
    bulk_half.push_back(seconds([&] { half_to_double_n(halves.data(), out.data(), n); }));
    g_sink = out[n - 1];
    compare.push_back(seconds([&] { g_sink = compare_tensors(a, b, 1.0, "out").pcc; }));
  }
  const double ns = 1e9 / static_cast<double>(n);
  auto row = [&](const char* what, const std::vector<double>& one,
                 const std::vector<double>& bulk) {
    const double o = bench::median(one), k = bench::median(bulk);
    fmt::print("{:<28} one at a time {:6.2f} ns/element   bulk {:6.2f} ns/element   {:5.2f}x\n",
               what, o * ns, k * ns, o / k);
  };
  fmt::print("{} elements, median of {} turns\n", n, turns);
  row("normal draws", one_normal, bulk_normal);
  row("f16 -> double", one_half, bulk_half);
  fmt::print("{:<28} {:6.2f} ns/element (two f16 tensors, one element an ulp apart)\n",
             "compare_tensors", bench::median(compare) * ns);
  return 0;
}
