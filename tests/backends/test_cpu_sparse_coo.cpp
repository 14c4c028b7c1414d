// The cpu backend's sparse COO constructor (_sparse_coo_tensor_with_dims_and_tensors), judged on
// its dense equivalent: hand-computed sums of duplicate indices, f64 accumulation rounded once,
// integer wrap-around and bool or, strided indices and values, the column-parallel path against
// one thread, and the errors (an index out of range; the meta function's checks).
#include <gtest/gtest.h>

#include <string>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const char* const kOp = "aten._sparse_coo_tensor_with_dims_and_tensors.default";

Values coo_args(int64_t sparse_dim, int64_t dense_dim, const Shape& size, const Tensor& indices,
                const Tensor& values, Layout layout = Layout::SparseCoo) {
  return {Value(sparse_dim),     Value(dense_dim), Value(size), Value(indices), Value(values),
          Value(values.dtype()), Value(layout),    Value(),     Value(false),   Value()};
}

Tensor index_row(const std::vector<int64_t>& v) {
  Tensor t = Tensor::empty({1, static_cast<int64_t>(v.size())}, DType::Int64);
  for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
  return t;
}

Tensor run_cpu(const Values& args, int threads = 2) {
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(threads);
  return cpu->run(OpRegistry::catalog().get(kOp), args).at(0).tensor();
}

TEST(CpuSparseCoo, DuplicatesAreSummedIntoTheDenseTensor) {
  Tensor v = Tensor::empty({3, 2}, DType::Float32);
  for (int64_t i = 0; i < 6; ++i) v.set(i, static_cast<double>(i + 1));
  const Tensor out = run_cpu(coo_args(1, 1, {4, 2}, index_row({2, 0, 2}), v));
  ASSERT_EQ(out.shape(), (Shape{4, 2}));
  ASSERT_EQ(out.dtype(), DType::Float32);
  const double want[] = {3, 4, 0, 0, 6, 8, 0, 0};  // rows 0 and 2 (1+5, 2+6)
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.get(i), want[i]) << i;
  expect_matches_ref(kOp, coo_args(1, 1, {4, 2}, index_row({2, 0, 2}), v));
}

TEST(CpuSparseCoo, FloatingSumsInF64RoundedOnce) {
  // 2^24 then 100 ones at one position: an f32 running sum never moves.
  std::vector<int64_t> idx(101, 5);
  Tensor v = Tensor::empty({101}, DType::Float32);
  v.set(0, 16777216.0);
  for (int64_t i = 1; i < 101; ++i) v.set(i, 1.0);
  const Tensor out = run_cpu(coo_args(1, 0, {8}, index_row(idx), v));
  EXPECT_EQ(out.get(5), 16777316.0);
  EXPECT_EQ(out.get(4), 0.0);
  // f16: 500 values into 16 rows, rounded once from the f64 sum.
  std::vector<int64_t> many;
  for (int64_t k = 0; k < 500; ++k) many.push_back((k * 7) % 16);
  expect_matches_ref(kOp,
                     coo_args(1, 1, {16, 2}, index_row(many), filled({500, 2}, DType::Float16)));
  expect_matches_ref(kOp,
                     coo_args(1, 1, {16, 2}, index_row(many), filled({500, 2}, DType::BFloat16)));
  expect_matches_ref(kOp,
                     coo_args(1, 1, {16, 2}, index_row(many), filled({500, 2}, DType::Float64)));
}

TEST(CpuSparseCoo, IntegersWrapAndBoolsOr) {
  std::vector<int64_t> idx(200, 1);
  Tensor ones = Tensor::empty({200}, DType::Int8);
  for (int64_t i = 0; i < 200; ++i) ones.set_int(i, 1);
  const Tensor i8 = run_cpu(coo_args(1, 0, {3}, index_row(idx), ones));
  EXPECT_EQ(i8.get_int(1), 200 - 256);
  EXPECT_EQ(i8.get_int(0), 0);
  Tensor b = Tensor::empty({4}, DType::Bool);
  for (int64_t i = 0; i < 4; ++i) b.set_int(i, i == 2 ? 1 : 0);
  const Tensor bo = run_cpu(coo_args(1, 0, {3}, index_row({0, 0, 2, 2}), b));
  EXPECT_EQ(bo.get_int(0), 0);
  EXPECT_EQ(bo.get_int(2), 1);  // false or true
  for (DType t : {DType::UInt8, DType::Int16, DType::Int32, DType::Int64})
    expect_matches_ref(kOp,
                       coo_args(1, 1, {16, 3}, index_row({1, 15, 1, 0, 7}), filled({5, 3}, t)));
}

TEST(CpuSparseCoo, StridedIndicesAndValuesSeveralSparseDims) {
  // Indices sliced from a wider tensor (stride 2 along nnz), values transposed.
  Tensor wide = Tensor::empty({2, 24}, DType::Int64);
  for (int64_t i = 0; i < 48; ++i) wide.set_int(i, (i * 5) % 16);
  const Tensor idx = wide.slice(1, 0, 24, 2);
  const Tensor vals = filled({3, 12}, DType::Float32).transpose(0, 1);
  expect_matches_ref(kOp, coo_args(2, 1, {16, 16, 3}, idx, vals));
  // No sparse dim: every nonzero is the whole dense tensor.
  expect_matches_ref(kOp, coo_args(0, 2, {4, 3}, Tensor::empty({0, 2}, DType::Int64),
                                   filled({2, 4, 3}, DType::Float32)));
  // No nonzeros: zeros.
  const Tensor none = run_cpu(coo_args(1, 1, {16, 3}, Tensor::empty({1, 0}, DType::Int64),
                                       Tensor::empty({0, 3}, DType::Float32)));
  for (int64_t i = 0; i < none.numel(); ++i) EXPECT_EQ(none.get(i), 0.0);
}

TEST(CpuSparseCoo, ColumnBlocksOverThreadsMatchOneThread) {
  // A DLRM-like embedding gradient: 192 columns split over the pool.
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < 3000; ++k) idx.push_back((k * 131) % 965);
  const Values args =
      coo_args(1, 1, {965, 192}, index_row(idx), filled({3000, 192}, DType::Float32));
  const Tensor one = run_cpu(args, 1), two = run_cpu(args, 2);
  for (int64_t i = 0; i < one.numel(); ++i) ASSERT_EQ(one.get(i), two.get(i)) << i;
  expect_matches_ref(kOp, args);
}

TEST(CpuSparseCoo, Errors) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get(kOp);
  const Tensor v = filled({2, 3}, DType::Float32);
  try {
    cpu->run(op, coo_args(1, 1, {16, 3}, index_row({3, 16}), v));
    FAIL() << "an index out of range must raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    EXPECT_EQ(std::string(e.what()),
              "index [16] of nonzero 1 is out of bounds for size [16, 3]: the sparse tensor has "
              "no dense equivalent");
  }
  // The meta function's checks: a strided layout, nnz mismatch.
  try {
    cpu->run(op, coo_args(1, 1, {16, 3}, index_row({3, 1}), v, Layout::Strided));
    FAIL() << "a strided layout must raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    EXPECT_NE(std::string(e.what()).find("Could not run"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cpu->run(op, coo_args(1, 1, {16, 3}, index_row({3, 1, 2}), v)), Error);
}

}  // namespace
}  // namespace crucible::cpu_test
