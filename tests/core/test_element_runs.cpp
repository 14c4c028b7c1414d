// Runs of elements (crucible/core/element_runs.h) convert exactly as the per-element loads and
// stores of tensor.h, on every dtype and at every stride sign; and opsutil::for_each_run visits
// every element once, at the offsets and logical index for_each_offset gives, merged or not,
// on one thread or several.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "crucible/core/element_runs.h"
#include "crucible/core/tensor.h"
#include "ops/ref_parallel.h"
#include "ops/util.h"

namespace crucible {
namespace {

// Bytes that hold every kind of value of every dtype: zeros, ones, NaN and inf patterns.
std::vector<unsigned char> bytes(size_t n) {
  std::vector<unsigned char> b(n);
  uint32_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    b[i] = static_cast<unsigned char>(s >> 16);
  }
  for (size_t i = 0; i + 8 <= n && i < 64; i += 8) std::memset(b.data() + i, 0xff, 4);  // NaNs
  return b;
}

const double kValues[] = {0.0,
                          -0.0,
                          1.0,
                          -1.5,
                          2.5,
                          3.5,
                          1e10,
                          -1e10,
                          65504.0,
                          65520.0,
                          1e300,
                          -1e300,
                          1e-45,
                          1e-320,
                          255.7,
                          -129.3,
                          2147483648.0,
                          -2147483649.0,
                          9.3e18,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::nan("")};

TEST(ElementRuns, LoadsAndStoresConvertAsThePerElementFunctions) {
  for (DType t : all_dtypes()) {
    const auto isz = static_cast<int64_t>(itemsize(t));
    const int64_t n = 23;
    for (int64_t stride : {1, 3, -2, 0}) {
      const std::vector<unsigned char> src = bytes(static_cast<size_t>(isz * (5 * n + 8)));
      // A base 2n elements in, so strides from -2 to 3 stay inside the buffer.
      const unsigned char* base = src.data() + isz * (2 * n);
      std::vector<double> d(static_cast<size_t>(n));
      std::vector<int64_t> iv(static_cast<size_t>(n));
      load_run_as_double(base, stride, n, t, d.data());
      load_run_as_int(base, stride, n, t, iv.data());
      for (int64_t i = 0; i < n; ++i) {
        const double want = load_as_double(base + i * stride * isz, t);
        EXPECT_EQ(std::memcmp(&want, &d[static_cast<size_t>(i)], 8), 0)
            << dtype_code(t) << " stride " << stride << " at " << i;
        EXPECT_EQ(iv[static_cast<size_t>(i)], load_as_int(base + i * stride * isz, t))
            << dtype_code(t) << " " << i;
      }
      // Stores: every value of kValues (and integers around the widths' limits).
      std::vector<double> vals(std::begin(kValues), std::end(kValues));
      std::vector<int64_t> ints = {0,
                                   1,
                                   -1,
                                   127,
                                   128,
                                   -129,
                                   255,
                                   256,
                                   32768,
                                   -2147483649LL,
                                   INT64_MAX,
                                   INT64_MIN,
                                   (int64_t{1} << 53) + 1};
      for (const bool as_int : {false, true}) {
        const auto m = static_cast<int64_t>(as_int ? ints.size() : vals.size());
        const int64_t s = stride == 0 ? 1 : stride;  // a store run never broadcasts
        std::vector<unsigned char> got(static_cast<size_t>(isz * (5 * m + 8)), 0xab), want = got;
        unsigned char* gb = got.data() + isz * (2 * m);
        unsigned char* wb = want.data() + isz * (2 * m);
        if (as_int)
          store_run_from_int(gb, s, m, t, ints.data());
        else
          store_run_from_double(gb, s, m, t, vals.data());
        for (int64_t i = 0; i < m; ++i) {
          if (as_int)
            store_from_int(wb + i * s * isz, t, ints[static_cast<size_t>(i)]);
          else
            store_from_double(wb + i * s * isz, t, vals[static_cast<size_t>(i)]);
        }
        EXPECT_EQ(got, want) << dtype_code(t) << " stride " << s << (as_int ? " ints" : "");
      }
    }
  }
}

// Every element of `shape` once, with the offsets for_each_offset gives at its logical index.
void expect_runs_cover(const Shape& shape, const std::vector<Tensor>& ops, bool parallel) {
  std::map<int64_t, std::vector<int64_t>> want;
  int64_t logical = 0;
  opsutil::for_each_offset(shape, ops, [&](std::span<const int64_t> o) {
    want[logical++] = std::vector<int64_t>(o.begin(), o.end());
  });
  std::map<int64_t, std::vector<int64_t>> got;
  std::mutex m;
  opsutil::for_each_run(shape, ops, parallel,
                        [&](int64_t first, const int64_t* o, int64_t n, const int64_t* st) {
                          EXPECT_LE(n, opsutil::kRunLength);
                          std::lock_guard<std::mutex> lock(m);
                          for (int64_t i = 0; i < n; ++i) {
                            std::vector<int64_t> at(ops.size());
                            for (size_t k = 0; k < ops.size(); ++k) at[k] = o[k] + i * st[k];
                            EXPECT_TRUE(got.emplace(first + i, at).second) << first + i;
                          }
                        });
  EXPECT_EQ(got, want) << shape_str(shape);
}

TEST(ForEachRun, VisitsEveryElementOnceAtForEachOffsetsOffsets) {
  const int saved = refpar::set_threads(3);
  // Contiguous (one merged run, split in pieces of kRunLength), transposed, sliced with an
  // offset, broadcast (stride 0), size-1 dims, 0-d and empty.
  const Tensor big = Tensor::zeros({3, 5000}, DType::Float32);
  const Tensor a = Tensor::zeros({4, 6, 5}, DType::Float32);
  const Tensor at = a.transpose(0, 2);    // [5, 6, 4]
  const Tensor sl = a.slice(1, 1, 5, 2);  // [4, 2, 5], offset 5
  const Tensor row = Tensor::zeros({5}, DType::Float64);
  for (bool parallel : {false, true}) {
    expect_runs_cover({3, 5000}, {big, big}, parallel);
    expect_runs_cover({5, 6, 4}, {at, Tensor::zeros({5, 6, 4}, DType::Int8)}, parallel);
    expect_runs_cover({4, 2, 5}, {sl, row}, parallel);
    expect_runs_cover({4, 1, 6, 5}, {Tensor::zeros({4, 1, 6, 5}, DType::Float32), a.slice(0, 1, 2)},
                      parallel);
    expect_runs_cover({}, {Tensor::scalar(1.0, DType::Float32)}, parallel);
    expect_runs_cover({0, 3}, {Tensor::zeros({0, 3}, DType::Float32)}, parallel);
  }
  refpar::set_threads(saved);
}

TEST(ForEachRun, ReadAndWriteDoublesKeepTheLogicalOrder) {
  Tensor a = Tensor::empty({4, 6, 5}, DType::Float16);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, 0.5 * static_cast<double>(i) - 7);
  const Tensor t = a.transpose(0, 2);
  const opsutil::Doubles v = opsutil::read_doubles(t);
  ASSERT_EQ(static_cast<int64_t>(v.size()), t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(v[static_cast<size_t>(i)], t.get(i)) << i;
  std::vector<double> w(v.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i) * 0.25;
  opsutil::write_doubles(t, w.data());
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), w[static_cast<size_t>(i)]) << i;
}

}  // namespace
}  // namespace crucible
