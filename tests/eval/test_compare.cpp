// compare_tensors on complex outputs: tolerances of the component dtype on complex magnitudes,
// NaN / inf per part, metrics (abs / rel error of the complex difference, ULPs in the
// component dtype, PCC over real and imaginary parts); and the real paths it must keep.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <new>
#include <vector>

#include "crucible/compare/compare.h"

namespace crucible {
namespace {

using cd = std::complex<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

Tensor ctensor(const std::vector<cd>& v, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t i = 0; i < v.size(); ++i) x.set_complex(static_cast<int64_t>(i), v[i]);
  return x;
}

TEST(CompareComplex, ToleranceOfTheComponentDtype) {
  EXPECT_EQ(default_tolerance(DType::Complex64).rtol, default_tolerance(DType::Float32).rtol);
  EXPECT_EQ(default_tolerance(DType::Complex128).atol, default_tolerance(DType::Float64).atol);
  EXPECT_EQ(default_tolerance(DType::Complex32).rtol, default_tolerance(DType::Float16).rtol);
  EXPECT_EQ(ulp_of(1.0, DType::Complex64), ulp_of(1.0, DType::Float32));
}

TEST(CompareComplex, PassesWithinTolerance) {
  const Tensor r = ctensor({{1.0, 2.0}, {-3.0, 0.5}, {0, 0}}, DType::Complex64);
  const Tensor c = ctensor({{1.0 + 1e-6, 2.0}, {-3.0, 0.5 - 2e-6}, {0, 1e-6}}, DType::Complex64);
  const TensorCheck k = compare_tensors(r, c, 1.0, "output 0");
  EXPECT_TRUE(k.passed) << k.reason;
  EXPECT_GT(k.max_abs_err, 0);
  EXPECT_GT(k.max_ulp_err, 0);
  EXPECT_NEAR(k.pcc, 1.0, 1e-9);
  EXPECT_EQ(k.atol, 1e-5);
}

TEST(CompareComplex, ComparesMagnitudesAndCatchesAWrongImaginaryPart) {
  // Real parts equal, imaginary part wrong: a comparison of real parts only would pass.
  const Tensor r = ctensor({{1.0, 2.0}, {3.0, -4.0}}, DType::Complex128);
  const Tensor c = ctensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Complex128);
  const TensorCheck k = compare_tensors(r, c, 1.0, "output 0");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.mismatches, 1);
  EXPECT_DOUBLE_EQ(k.max_abs_err, 8.0);        // |(3+4j) - (3-4j)|
  EXPECT_DOUBLE_EQ(k.max_rel_err, 8.0 / 5.0);  // relative to |3-4j| = 5
  EXPECT_NE(k.reason.find("3-4j"), std::string::npos) << k.reason;
  // The relative tolerance is on |r|: an error of 1e-3 on an element of magnitude 5 passes
  // for c32 (rtol 1e-3 * 5) but not for c64.
  const std::vector<cd> ref = {{3.0, -4.0}};
  const std::vector<cd> off = {{3.0 + 3e-3, -4.0}};
  EXPECT_FALSE(
      compare_tensors(ctensor(ref, DType::Complex64), ctensor(off, DType::Complex64), 1, "o")
          .passed);
  EXPECT_TRUE(
      compare_tensors(ctensor(ref, DType::Complex32), ctensor(off, DType::Complex32), 1, "o")
          .passed);
}

TEST(CompareComplex, NanMustMeetNanInTheSamePart) {
  const Tensor r = ctensor({{kNaN, 1.0}}, DType::Complex64);
  EXPECT_TRUE(compare_tensors(r, ctensor({{kNaN, 1.0}}, DType::Complex64), 1, "o").passed);
  EXPECT_FALSE(compare_tensors(r, ctensor({{1.0, kNaN}}, DType::Complex64), 1, "o").passed);
  EXPECT_FALSE(compare_tensors(r, ctensor({{kNaN, 2.0}}, DType::Complex64), 1, "o").passed);
  EXPECT_FALSE(compare_tensors(r, ctensor({{0.0, 1.0}}, DType::Complex64), 1, "o").passed);
  const Tensor both = ctensor({{kNaN, kNaN}}, DType::Complex64);
  EXPECT_TRUE(compare_tensors(both, ctensor({{kNaN, kNaN}}, DType::Complex64), 1, "o").passed);
}

TEST(CompareComplex, InfMustMeetTheSameInf) {
  const Tensor r = ctensor({{kInf, -1.0}}, DType::Complex128);
  EXPECT_TRUE(compare_tensors(r, ctensor({{kInf, -1.0}}, DType::Complex128), 1, "o").passed);
  EXPECT_FALSE(compare_tensors(r, ctensor({{-kInf, -1.0}}, DType::Complex128), 1, "o").passed);
  EXPECT_FALSE(compare_tensors(r, ctensor({{kInf, kInf}}, DType::Complex128), 1, "o").passed);
  // The finite part next to an infinity is still compared.
  EXPECT_FALSE(compare_tensors(r, ctensor({{kInf, 5.0}}, DType::Complex128), 1, "o").passed);
}

TEST(CompareComplex, ScaleWidensTheTolerance) {
  const Tensor r = ctensor({{100.0, 0.0}}, DType::Complex64);
  const Tensor c = ctensor({{100.0, 1e-3}}, DType::Complex64);
  EXPECT_FALSE(compare_tensors(r, c, 1.0, "o").passed);
  EXPECT_TRUE(compare_tensors(r, c, 10.0, "o").passed);
}

TEST(CompareComplex, PccOverRealAndImaginaryParts) {
  const Tensor r = ctensor({{1.0, 0.0}, {0.0, 1.0}}, DType::Complex64);
  // Conjugate: real parts identical, imaginary parts negated -> cos = (1 - 1) / 2 = 0.
  const Tensor conj = ctensor({{1.0, 0.0}, {0.0, -1.0}}, DType::Complex64);
  EXPECT_NEAR(compare_tensors(r, conj, 1, "o").pcc, 0.0, 1e-12);
  const Tensor neg = ctensor({{-1.0, 0.0}, {0.0, -1.0}}, DType::Complex64);
  EXPECT_NEAR(compare_tensors(r, neg, 1, "o").pcc, -1.0, 1e-12);
}

TEST(CompareComplex, ShapeAndDtypeMustMatch) {
  const Tensor r = ctensor({{1.0, 2.0}}, DType::Complex64);
  const TensorCheck k = compare_tensors(r, ctensor({{1.0, 2.0}}, DType::Complex128), 1, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_NE(k.reason.find("wrong dtype"), std::string::npos);
  EXPECT_FALSE(compare_tensors(r, Tensor::full({1}, 1.0, DType::Float32), 1, "o").passed);
}

TEST(CompareReal, UnchangedPaths) {
  Tensor r = Tensor::full({3}, 1.0, DType::Float32);
  Tensor c = Tensor::full({3}, 1.0, DType::Float32);
  c.set(1, 1.1);
  const TensorCheck k = compare_tensors(r, c, 1, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.mismatches, 1);
  Tensor i = Tensor::full({2}, 3.0, DType::Int64);
  EXPECT_TRUE(compare_tensors(i, i.clone(), 1, "o").passed);
}

Tensor rtensor(const std::vector<double>& v, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t i = 0; i < v.size(); ++i) x.set(static_cast<int64_t>(i), v[i]);
  return x;
}

TEST(CompareReal, NanWhereTheReferenceHasANumberShowsInTheFigures) {
  const Tensor r = rtensor({1.0, 2.0, 3.0, 4.0}, DType::Float32);
  const Tensor c = rtensor({1.0, kNaN, 3.0, 4.0}, DType::Float32);
  const TensorCheck k = compare_tensors(r, c, 1, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.mismatches, 1);
  EXPECT_EQ(k.max_abs_err, kInf);
  EXPECT_EQ(k.max_rel_err, kInf);
  EXPECT_EQ(k.max_ulp_err, kInf);
  EXPECT_LT(k.pcc, 0.99);
  EXPECT_NE(k.reason.find("max abs err inf"), std::string::npos) << k.reason;
  // The other way round: a number where the reference has NaN.
  const TensorCheck back = compare_tensors(c, r, 1, "o");
  EXPECT_FALSE(back.passed);
  EXPECT_EQ(back.max_abs_err, kInf);
  EXPECT_LT(back.pcc, 0.99);
}

TEST(CompareReal, InfOfTheWrongSignShowsInTheFigures) {
  const Tensor r = rtensor({kInf, 1.0, -2.0}, DType::Float64);
  const Tensor c = rtensor({-kInf, 1.0, -2.0}, DType::Float64);
  const TensorCheck k = compare_tensors(r, c, 1, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.max_abs_err, kInf);
  EXPECT_LT(k.pcc, 0.5);
  // inf where the reference is finite.
  const TensorCheck f = compare_tensors(rtensor({5.0, 1.0}, DType::Float32),
                                        rtensor({kInf, 1.0}, DType::Float32), 1, "o");
  EXPECT_FALSE(f.passed);
  EXPECT_EQ(f.max_abs_err, kInf);
  EXPECT_LT(f.pcc, 1.0);
  // Every element NaN against numbers: no agreement at all.
  const TensorCheck all = compare_tensors(rtensor({1.0, 2.0}, DType::Float32),
                                          rtensor({kNaN, kNaN}, DType::Float32), 1, "o");
  EXPECT_EQ(all.pcc, -1.0);
}

TEST(CompareReal, AgreeingNanAndInfKeepTheFiguresClean) {
  const Tensor r = rtensor({kNaN, kInf, -kInf, 1.0}, DType::Float32);
  const TensorCheck k = compare_tensors(r, r.clone(), 1, "o");
  EXPECT_TRUE(k.passed) << k.reason;
  EXPECT_EQ(k.max_abs_err, 0);
  EXPECT_EQ(k.pcc, 1.0);
}

TEST(CompareComplex, NanMismatchShowsInTheFigures) {
  const Tensor r = ctensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Complex64);
  const Tensor c = ctensor({{1.0, kNaN}, {3.0, 4.0}}, DType::Complex64);
  const TensorCheck k = compare_tensors(r, c, 1, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.max_abs_err, kInf);
  EXPECT_LT(k.pcc, 1.0);
}

}  // namespace
}  // namespace crucible

namespace crucible {
namespace {

// The comparator's memory: blocks of doubles, never f64 copies of whole tensors. Under a data
// limit 200 MB above what the process holds, two 20M-element f32 tensors (80 MB each, made
// before the limit) compare; whole f64 copies would take 320 MB more. The figures are those of
// a direct computation: one mismatch (the first element past the first block), its error.
TEST(CompareMemory, ALargeTensorIsComparedInBlocksUnderATightDataLimit) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int64_t n = 20'000'000;
    Tensor a = Tensor::empty({n}, DType::Float32);
    Tensor b = Tensor::empty({n}, DType::Float32);
    float* pa = a.data<float>();
    float* pb = b.data<float>();
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] = static_cast<float>(i % 1000) * 0.5f;
    pb[int64_t{1} << 22] += 1.0f;
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) _exit(10);
      std::fclose(f);
    }
    const rlim_t lim = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                       (rlim_t{200} << 20);
    struct rlimit rl = {lim, lim};
    if (setrlimit(RLIMIT_DATA, &rl) != 0) _exit(11);
    try {
      const TensorCheck c = compare_tensors(a, b, 1.0, "output 0");
      if (c.passed || c.mismatches != 1) _exit(12);
      if (c.reason.find("first at element 4194304") == std::string::npos) _exit(13);
      if (std::fabs(c.max_abs_err - 1.0) > 1e-12) _exit(14);
      if (!(c.pcc > 0.999999 && c.pcc < 1.0)) _exit(15);
    } catch (const std::bad_alloc&) {
      _exit(16);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10-11: setup, 12: the mismatch count, 13: its place, 14: its error, 15: the PCC, "
         "16: the comparison ran out of the data limit";
}

// Contiguous f16 and bf16 tensors are read straight from memory: the values the comparator
// sees are the elements' own.
TEST(CompareOrder, HalfAndBFloat16BlocksHoldTheElementsValues) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Tensor a = Tensor::empty({64}, t);
    for (int64_t i = 0; i < 64; ++i) a.set(i, 0.5 * static_cast<double>(i) - 3.0);
    Tensor b = a.clone();
    b.set(10, 6.0);  // a holds 2 there
    const TensorCheck c = compare_tensors(a, b, 1.0, "output 0");
    EXPECT_EQ(c.mismatches, 1) << dtype_code(t);
    EXPECT_NE(c.reason.find("first at element 10: expected 2, got 6"), std::string::npos)
        << c.reason;
    EXPECT_DOUBLE_EQ(c.max_abs_err, 4.0);
  }
}

// Two transposed outputs (alike, dense, not row-major) are read in memory order: the same
// figures as row-major copies of them, and the mismatch named is the logically first one.
TEST(CompareOrder, TransposedTensorsGiveTheFiguresOfTheirRowMajorCopies) {
  Tensor a = Tensor::empty({6, 5, 4}, DType::Float32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, 0.25 * static_cast<double>(i % 17) - 1.0);
  Tensor b = a.clone();
  const Tensor at = a.permute({2, 0, 1}), bt = b.permute({2, 0, 1});
  // Two mismatches: the later one in memory comes first in bt's logical order.
  bt.set(1, bt.get(1) + 1.0);    // logical 1 of bt: memory offset 4
  bt.set(60, bt.get(60) + 2.0);  // logical 60: memory offset 1
  ASSERT_FALSE(at.is_contiguous());
  const TensorCheck c = compare_tensors(at, bt, 1.0, "output 0");
  const TensorCheck d = compare_tensors(at.contiguous(), bt.contiguous(), 1.0, "output 0");
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_mismatch, 1);
  EXPECT_EQ(c.reason, d.reason);
  EXPECT_NE(c.reason.find("first at element 1:"), std::string::npos) << c.reason;
  EXPECT_DOUBLE_EQ(c.max_abs_err, d.max_abs_err);
  EXPECT_DOUBLE_EQ(c.max_rel_err, d.max_rel_err);
  EXPECT_NEAR(c.pcc, d.pcc, 1e-12);
}

// A candidate with the reference's bytes is found equal without reading its values: the same
// figures as the values read one by one give (checked through a strided copy, which is read),
// special values, zeros, large values and integers included, transposed outputs too.
TEST(CompareIdentical, SameBytesGiveTheFiguresOfTheValuesRead) {
  auto strided = [](const Tensor& x) {
    Tensor y = Tensor::empty_strided({x.numel()}, {2}, x.dtype());
    for (int64_t i = 0; i < x.numel(); ++i)
      is_floating(x.dtype()) ? y.set(i, x.get(i)) : y.set_int(i, x.get_int(i));
    return y;
  };
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Int64,
                  DType::Bool}) {
    for (int fill = 0; fill < 4; ++fill) {
      Tensor r = Tensor::empty({70001}, t);  // more than one block
      for (int64_t i = 0; i < r.numel(); ++i) {
        const double v = fill == 0   ? 0.0
                         : fill == 1 ? std::sin(static_cast<double>(i)) * 1e3
                         : fill == 2 ? (i % 7 == 0    ? kNaN
                                        : i % 11 == 0 ? -kInf
                                                      : 0.5 * (i % 9))
                                     : (i % 5 == 0 ? kInf : 0.0);
        is_floating(t) ? r.set(i, v) : r.set_int(i, static_cast<int64_t>(i % 13) - 6);
      }
      const TensorCheck fast = compare_tensors(r, r.clone(), 1, "o");
      const TensorCheck read = compare_tensors(r, strided(r), 1, "o");
      const std::string at = std::string(dtype_code(t)) + " fill " + std::to_string(fill);
      EXPECT_EQ(fast.passed, read.passed) << at;
      EXPECT_EQ(fast.mismatches, read.mismatches) << at;
      EXPECT_EQ(fast.reason, read.reason) << at;
      EXPECT_EQ(fast.max_abs_err, read.max_abs_err) << at;
      EXPECT_EQ(fast.max_rel_err, read.max_rel_err) << at;
      EXPECT_EQ(fast.max_ulp_err, read.max_ulp_err) << at;
      EXPECT_EQ(fast.pcc, read.pcc) << at;
      EXPECT_EQ(fast.atol, read.atol) << at;
      EXPECT_EQ(fast.rtol, read.rtol) << at;
    }
  }
  Tensor a = Tensor::empty({6, 5, 4}, DType::Float32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, 0.25 * static_cast<double>(i % 17) - 1.0);
  const Tensor at = a.permute({2, 0, 1});
  const TensorCheck c = compare_tensors(at, a.clone().permute({2, 0, 1}), 1.0, "output 0");
  EXPECT_TRUE(c.passed);
  Tensor flat = Tensor::empty({a.numel()}, DType::Float32);  // at's values in logical order
  const Tensor ac = at.contiguous();
  for (int64_t i = 0; i < a.numel(); ++i) flat.set(i, ac.get(i));
  EXPECT_EQ(c.pcc, compare_tensors(flat, strided(flat), 1.0, "o").pcc);
}

}  // namespace
}  // namespace crucible
