// ATen semantics of embedding: a row gather of any index shape, i32/i64 indices only, the
// forward ignoring padding_idx/scale_grad_by_freq/sparse, and "index out of range in self".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"
#include "ops/samples.h"

namespace crucible {
namespace {

const OpRegistry& embedding_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_embedding_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor embedding(const Tensor& w, const Tensor& idx, int64_t padding_idx = -1) {
  return embedding_ops()
      .get("aten.embedding.default")
      .run_ref({w, idx, Value(padding_idx), Value(false), Value(false)})[0]
      .tensor();
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

TEST(Embedding, GathersRows) {
  const Tensor w = tensor({0, 1, 10, 11, 20, 21}, {3, 2}, DType::Float16);
  const Tensor idx = tensor({2, 0, 2, 1}, {2, 2}, DType::Int32);
  Tensor out = embedding(w, idx, /*padding_idx=*/0);  // padding_idx only matters for backward
  EXPECT_EQ(out.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(out.dtype(), DType::Float16);
  const std::vector<double> expect = {20, 21, 0, 1, 20, 21, 10, 11};
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.get(i), expect[i]) << i;
  Tensor one = embedding(w, Tensor::scalar(1, DType::Int64));
  EXPECT_EQ(one.shape(), Shape({2}));
  EXPECT_EQ(one.get(1), 11.0);
  const Tensor wi = tensor({5, 6, 7, 8}, {2, 2}, DType::Int64);
  EXPECT_EQ(embedding(wi, tensor({1}, {1}, DType::Int64)).get_int(0), 7);
}

TEST(Embedding, Errors) {
  const Tensor w = Tensor::zeros({3, 2}, DType::Float32);
  EXPECT_EQ(op_error_of([&] { embedding(w, tensor({3}, {1}, DType::Int64)); }),
            "index out of range in self");
  EXPECT_EQ(op_error_of([&] { embedding(w, tensor({-1}, {1}, DType::Int64)); }),
            "index out of range in self");
  EXPECT_EQ(op_error_of([&] {
              embedding(Tensor::zeros({3}, DType::Float32), tensor({0}, {1}, DType::Int64));
            }),
            "'weight' must be 2-D");
  EXPECT_NE(op_error_of([&] {
              embedding(w, tensor({0}, {1}, DType::Float32));
            }).find("Long, Int; but got torch.FloatTensor"),
            std::string::npos);
}

TEST(Embedding, IndicesRoleAndOutOfRangeCase) {
  const OpDef& op = embedding_ops().get("aten.embedding.default");
  const ArgRole role = op.role_of("indices");
  EXPECT_EQ(role.kind, ArgRole::Kind::IndexInto);
  EXPECT_EQ(role.of, "weight");
  EXPECT_EQ(role.dim, 0);
  // In-range cases materialise to valid indices; the fill='oob' case makes the reference raise.
  int oob_cases = 0;
  for (const Sample& s : op.samples(SampleContext{false})) {
    const auto& idx = s.call.args.at(1);
    if (idx.kind != cases::LitKind::Tensor || idx.tensor.fill != std::optional<std::string>("oob"))
      continue;
    ++oob_cases;
    const Values args = materialize(op, s.call, 11);
    EXPECT_EQ(op_error_of([&] { op.run_ref(args); }), "index out of range in self");
  }
  EXPECT_GE(oob_cases, 1);
}

}  // namespace
}  // namespace crucible
