// The meta family: sym_size/sym_stride/sym_numel/sym_storage_offset return ints with ATen's dim
// wrapping (no scalar wrapping), and _sparse_coo_tensor_with_dims_and_tensors returns the dense
// equivalent of the sparse tensor (duplicates summed) after ATen's argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& meta_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_meta_ops(*reg);
    return reg;
  }();
  return *r;
}

Values run(const std::string& name, const std::string& call) {
  const OpDef& d = meta_ops().get(name);
  return d.run_ref(materialize(d, cases::parse_call(call), 5));
}

std::string error_of(const std::string& name, const std::string& call) {
  try {
    run(name, call);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

const char* kSparse = "aten._sparse_coo_tensor_with_dims_and_tensors.default";

TEST(MetaQueries, ReturnInts) {
  const Value s = run("aten.sym_size.int", "((T([2, 3], f32), -1), {})").at(0);
  EXPECT_EQ(s.kind(), ValueKind::Int);
  EXPECT_EQ(s.to_int(), 3);
  EXPECT_EQ(run("aten.sym_stride.int", "((T([4, 3], f32, stride=(1, 4)), 1), {})")[0].to_int(), 4);
  EXPECT_EQ(run("aten.sym_stride.int", "((T([5, 8], f32, stride=(0, 1)), 0), {})")[0].to_int(), 0);
  EXPECT_EQ(run("aten.sym_numel.default", "((T([2, 0], f32),), {})")[0].to_int(), 0);
  EXPECT_EQ(run("aten.sym_numel.default", "((T([2, 3, 4], i8),), {})")[0].to_int(), 24);
  EXPECT_EQ(run("aten.sym_storage_offset.default", "((T([2, 3], f32),), {})")[0].to_int(), 0);
  const Tensor base = Tensor::zeros({2, 3}, DType::Float32);
  EXPECT_EQ(
      meta_ops().get("aten.sym_storage_offset.default").run_ref({base.slice(0, 1, 2)})[0].to_int(),
      3);
}

TEST(MetaQueries, DimErrorsAsTensorSize) {
  EXPECT_EQ(error_of("aten.sym_size.int", "((T([2, 3], f32), 2), {})"),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_of("aten.sym_stride.int", "((T([2, 3], f32), -3), {})"),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
  // No scalar wrapping: a 0-d tensor has no dim 0.
  EXPECT_EQ(error_of("aten.sym_size.int", "((T([], f32), 0), {})"),
            "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(error_of("aten.sym_stride.int", "((T([], f32), -1), {})"),
            "Dimension specified as -1 but tensor has no dimensions");
}

TEST(SparseCoo, DenseEquivalentSumsDuplicates) {
  const OpDef& d = meta_ops().get(kSparse);
  Tensor idx = Tensor::empty({1, 4}, DType::Int64);
  const int64_t rows[] = {0, 2, 2, 0};
  for (int64_t k = 0; k < 4; ++k) idx.set_int(k, rows[k]);
  Tensor vals = Tensor::empty({4, 2}, DType::Float32);
  for (int64_t i = 0; i < 8; ++i) vals.set(i, static_cast<double>(i));
  const Values args{
      Value(int64_t{1}), Value(int64_t{1}),     Value(std::vector<int64_t>{3, 2}), Value(idx),
      Value(vals),       Value(DType::Float32), Value(Layout::SparseCoo)};
  const Tensor out = d.run_ref(args)[0].tensor();
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_FALSE(out.shares_storage(vals));
  const double expected[] = {6, 8, 0, 0, 6, 8};  // torch: .to_dense() of the same tensor
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(out.get(i), expected[i]) << i;
  EXPECT_DOUBLE_EQ(d.compare.tol_scale(args), std::sqrt(2.0));
  // Two sparse dims, no dense dims.
  Tensor idx2 = Tensor::empty({2, 2}, DType::Int64);
  const int64_t ij[] = {0, 1, 3, 3};
  for (int64_t k = 0; k < 4; ++k) idx2.set_int(k, ij[k]);
  Tensor v2 = Tensor::empty({2}, DType::Int32);
  v2.set_int(0, 1);
  v2.set_int(1, 2);
  const Tensor o2 =
      d.run_ref({Value(int64_t{2}), Value(int64_t{0}), Value(std::vector<int64_t>{3, 4}),
                 Value(idx2), Value(v2), Value(DType::Int32), Value(Layout::SparseCoo)})[0]
          .tensor();
  EXPECT_EQ(o2.dtype(), DType::Int32);
  EXPECT_EQ(o2.get_int(3), 1);
  EXPECT_EQ(o2.get_int(7), 2);
  EXPECT_EQ(o2.get_int(0), 0);
}

TEST(SparseCoo, ArgumentChecks) {
  EXPECT_EQ(error_of(kSparse,
                     "((1, 1, [16, 3], T([1, 4], i64), T([4, 3], f32)), "
                     "{'dtype': f16, 'layout': torch.sparse_coo})"),
            "dtype of values (Float) must match dtype of sparse tensor (Half)");
  EXPECT_EQ(error_of(kSparse,
                     "((1, 0, [16, 3], T([1, 4], i64), T([4, 3], f32)), "
                     "{'layout': torch.sparse_coo})"),
            "number of dimensions must be sparse_dim (1) + dense_dim (0), but got 2");
  EXPECT_EQ(error_of(kSparse,
                     "((1, 1, [16, 3], T([1, 4], i32), T([4, 3], f32)), "
                     "{'layout': torch.sparse_coo})"),
            "indices must be an int64 tensor");
  EXPECT_EQ(error_of(kSparse,
                     "((1, 1, [16, 3], T([1, 4], i64), T([4, 2], f32)), "
                     "{'layout': torch.sparse_coo})"),
            "values has incorrect size, expected [4, 3], got [4, 2]");
  EXPECT_EQ(error_of(kSparse,
                     "((1, 1, [16, 3], T([1, 3], i64), T([4, 3], f32)), "
                     "{'layout': torch.sparse_coo})"),
            "indices and values must have same nnz, but got nnz from indices: 3, nnz from "
            "values: 4");
  // A strided layout has no kernel in ATen.
  EXPECT_NE(error_of(kSparse, "((1, 1, [16, 3], T([1, 4], i64), T([4, 3], f32)), {})"), "");
  // Indices are drawn in range of every sample's sparse sizes (>= 16).
  EXPECT_EQ(meta_ops().get(kSparse).role_of("indices").kind, ArgRole::Kind::IndexInto);
}

TEST(MetaSamples, ReferenceRaisesExactlyOnErrorCases) {
  EXPECT_EQ(meta_ops().all().size(), 5u);
  for (const OpDef* d : meta_ops().all()) {
    EXPECT_EQ(d->family, "meta");
    EXPECT_GE(d->samples(SampleContext{false}).size(), 8u) << d->name;
    EXPECT_FALSE(d->samples(SampleContext{true}).empty()) << d->name;
    for (const Sample& s : d->samples(SampleContext{false})) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*d, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << d->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      std::string error;
      try {
        const Values out = d->run_ref(args);
        ASSERT_FALSE(out.empty());
        EXPECT_GE(d->run_cost(args, out).bytes, 0);
        if (d->compare.tol_scale) {
          EXPECT_GE(d->compare.tol_scale(args), 1.0);
        }
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << d->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << d->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace
}  // namespace crucible
