// ATen semantics of cumsum, cumprod and cumsum_: result dtypes, conversion before the scan,
// wrapping, in-place dtype rules, 0-d and dims.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& scan_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_scan_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

Tensor run(const std::string& op, const Tensor& x, int64_t dim, Value dtype = Value()) {
  return scan_ops().get(op).run_ref({x, Value(dim), dtype})[0].tensor();
}

TEST(Scan, CumsumDtypes) {
  const Tensor i32 = tensor({1, 2, 3}, {3}, DType::Int32);
  Tensor s = run("aten.cumsum.default", i32, 0);
  EXPECT_EQ(s.dtype(), DType::Int64);
  EXPECT_EQ(s.get_int(2), 6);
  Tensor t =
      run("aten.cumsum.default", tensor({1.5, 2.7}, {2}, DType::Float32), 0, Value(DType::Int64));
  EXPECT_EQ(t.get_int(0), 1);
  EXPECT_EQ(t.get_int(1), 3);  // converted first: 1 + 2
  Tensor b = run("aten.cumprod.default", tensor({1, 1}, {2}, DType::Bool), 0);
  EXPECT_EQ(b.dtype(), DType::Int64);
  Tensor w =
      run("aten.cumsum.default", tensor({100, 100}, {2}, DType::Int8), 0, Value(DType::Int8));
  EXPECT_EQ(w.get_int(1), -56);
}

TEST(Scan, DimsAndZeroD) {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  Tensor rows = run("aten.cumsum.default", x, -1);
  EXPECT_EQ(rows.get(2), 6.0);
  EXPECT_EQ(rows.get(5), 15.0);
  Tensor cols = run("aten.cumprod.default", x, 0);
  EXPECT_EQ(cols.get(3), 4.0);
  EXPECT_EQ(cols.get(5), 18.0);
  EXPECT_EQ(run("aten.cumsum.default", Tensor::scalar(3, DType::Float32), 0).get(0), 3.0);
  EXPECT_THROW(run("aten.cumsum.default", Tensor::scalar(3, DType::Float32), 1), Error);
}

TEST(Scan, InplaceKeepsDtype) {
  Tensor x = tensor({1, 2}, {2}, DType::Int32);
  Values out = scan_ops().get("aten.cumsum_.default").run_ref({x, Value(int64_t{0}), Value()});
  EXPECT_TRUE(out[0].tensor().shares_storage(x));
  EXPECT_EQ(x.dtype(), DType::Int32);
  EXPECT_EQ(x.get_int(1), 3);
  try {
    scan_ops().get("aten.cumsum_.default").run_ref({x, Value(int64_t{0}), Value(DType::Int64)});
    ADD_FAILURE() << "dtype= differing from self's must raise";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "Bad in-place call: input tensor dtype int and output tensor dtype long int should "
              "match");
  }
}

}  // namespace
}  // namespace crucible
