// ATen semantics of gather/scatter, advanced indexing, index_put, index_select, index_add and
// masked_scatter, with values checked against torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& indexing_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_indexing_ops(*reg);
    return reg;
  }();
  return *r;
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

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

// Every op: >= 8 correctness samples, each materialises, and its reference raises exactly when
// the label starts with "error:".
void check_all_samples(const OpRegistry& reg) {
  for (const OpDef* op : reg.all()) {
    const auto samples = op->samples(SampleContext{false});
    EXPECT_GE(samples.size(), 8u) << op->name;
    for (const Sample& s : samples) {
      const bool must_raise = s.label.rfind("error:", 0) == 0;
      bool raised = false;
      std::string msg;
      try {
        const Values args = materialize(*op, s.call, 7);
        op->run_ref(args, 7);
      } catch (const Error& e) {
        raised = true;
        msg = e.what();
      }
      EXPECT_EQ(raised, must_raise) << op->name << " / " << s.label << ": " << msg;
    }
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
}

Tensor run1(const std::string& op, Values args) {
  return indexing_ops().get(op).run_ref(args)[0].tensor();
}
Tensor idx(std::vector<double> v, Shape s) { return tensor(v, s, DType::Int64); }
Tensor arange(int64_t n, Shape s) {
  Tensor t = Tensor::empty(s, DType::Float32);
  for (int64_t i = 0; i < n; ++i) t.set(i, static_cast<double>(i));
  return t;
}

TEST(IndexingOps, GatherScatter) {
  const Tensor x = arange(12, {3, 4});
  EXPECT_EQ(values_of(run1("aten.gather.default",
                           {x, Value(1), idx({3, 0, 1, 1, 2, 0}, {3, 2}), Value(false)})),
            std::vector<double>({3, 0, 5, 5, 10, 8}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.gather.default", {x, Value(0), idx({-1}, {1, 1}), Value(false)});
            }),
            "index -1 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(
      op_error_of([&] {
        run1("aten.gather.default", {x, Value(0), tensor({0}, {1, 1}, DType::Int32), Value(false)});
      }),
      "gather(): Expected dtype int64 for index");
  EXPECT_EQ(values_of(run1("aten.scatter_add.default", {Tensor::zeros({2, 3}, DType::Float32),
                                                        Value(0), idx({1, 0, 1, 1, 1, 0}, {2, 3}),
                                                        Tensor::full({2, 3}, 1, DType::Float32)})),
            std::vector<double>({0, 1, 1, 2, 1, 1}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.scatter.src",
                   {x, Value(0), idx({0}, {1, 1}), Tensor::zeros({1, 1}, DType::Float64)});
            }),
            "scatter(): Expected self.dtype to be equal to src.dtype");
  // A float value on an integer tensor is truncated: scatter([1, 2, 3, 4], 0, [0, 0, 1], 2.5).
  EXPECT_EQ(values_of(run1("aten.scatter.value", {tensor({1, 2, 3, 4}, {4}, DType::Int64), Value(0),
                                                  idx({0, 0, 1}, {3}), Value(2.5)})),
            std::vector<double>({2, 2, 3, 4}));
  const Tensor base = tensor({1, 2, 3, 4}, {4}, DType::Int64);
  const Tensor src = tensor({5, -6, 7}, {3}, DType::Int64);
  const Tensor where = idx({0, 0, 1}, {3});
  EXPECT_EQ(values_of(run1("aten.scatter.reduce", {base, Value(0), where, src, Value("multiply")})),
            std::vector<double>({-30, 14, 3, 4}));
  // mean floors for integers; include_self=False leaves self out where values arrive.
  EXPECT_EQ(values_of(run1("aten.scatter_reduce.two",
                           {base, Value(0), where, src, Value("mean"), Value(true)})),
            std::vector<double>({0, 4, 3, 4}));
  EXPECT_EQ(values_of(run1("aten.scatter_reduce.two",
                           {base, Value(0), where, src, Value("mean"), Value(false)})),
            std::vector<double>({-1, 7, 3, 4}));
  Tensor amax = run1("aten.scatter_reduce.two",
                     {tensor({1, 2, 3, 4}, {4}, DType::Float32), Value(0), where,
                      tensor({5, NAN, 7}, {3}, DType::Float32), Value("amax"), Value(false)});
  EXPECT_TRUE(std::isnan(amax.get(0)));
  EXPECT_EQ(amax.get(1), 7.0);
  EXPECT_EQ(op_error_of([&] {
              run1("aten.scatter.reduce", {base, Value(0), where, src, Value("sum")});
            }),
            "reduce argument must be either add or multiply.");
}

TEST(IndexingOps, AdvancedIndexing) {
  const Tensor x = arange(12, {3, 4});
  // x[[[0], [2]], [1, -1]] -> [[1, 3], [9, 11]].
  Tensor r = run1("aten.index.Tensor",
                  {x, Value::tensor_list({idx({0, 2}, {2, 1}), idx({1, -1}, {2})}, true)});
  EXPECT_EQ(r.shape(), Shape({2, 2}));
  EXPECT_EQ(values_of(r), std::vector<double>({1, 3, 9, 11}));
  // Indexed dims separated by None: the broadcast dims come first.
  const Tensor y = arange(24, {2, 3, 4});
  r = run1("aten.index.Tensor",
           {y, Value::tensor_list({idx({1, 0}, {2}), Tensor(), idx({3, 0}, {2})}, true)});
  EXPECT_EQ(r.shape(), Shape({2, 3}));
  EXPECT_EQ(values_of(r), std::vector<double>({15, 19, 23, 0, 4, 8}));
  // Adjacent after a None: the broadcast dims stay in place.
  r = run1("aten.index.Tensor",
           {Tensor::zeros({2, 3, 4, 5}, DType::Float32),
            Value::tensor_list({Tensor(), idx({0, 1}, {2}), idx({0, 1}, {2})}, true)});
  EXPECT_EQ(r.shape(), Shape({2, 2, 5}));
  r = run1("aten.index.Tensor",
           {x, Value::tensor_list({tensor({1, 0, 1}, {3}, DType::Bool)}, true)});
  EXPECT_EQ(values_of(r), std::vector<double>({0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index.Tensor", {x, Value::tensor_list({idx({3}, {1})}, true)});
            }),
            "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(
      op_error_of([&] {
        run1("aten.index.Tensor",
             {x, Value::tensor_list({idx({0, 1}, {2}), idx({0, 1, 2}, {3})}, true)});
      }),
      "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index.Tensor",
                   {x, Value::tensor_list({tensor({1, 0}, {2}, DType::Bool)}, true)});
            }),
            "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
            "[3, 4] at index 0");
}

TEST(IndexingOps, IndexPut) {
  // Accumulate adds duplicates: index_put(zeros(4), [[1, 1, 3]], [1, 2, 5], True).
  Tensor r = run1("aten.index_put.default", {Tensor::zeros({4}, DType::Float32),
                                             Value::tensor_list({idx({1, 1, 3}, {3})}, true),
                                             tensor({1, 2, 5}, {3}, DType::Float32), Value(true)});
  EXPECT_EQ(values_of(r), std::vector<double>({0, 3, 0, 5}));
  // The in-place form writes self and returns it.
  const Tensor self = Tensor::zeros({2, 2}, DType::Int64);
  Tensor s = run1("aten.index_put_.default", {self, Value::tensor_list({idx({1}, {1})}, true),
                                              tensor({4, 5}, {2}, DType::Int64), Value(false)});
  EXPECT_TRUE(s.shares_storage(self));
  EXPECT_EQ(values_of(self), std::vector<double>({0, 0, 4, 5}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index_put.default", {Tensor::zeros({3, 4}, DType::Float32),
                                              Value::tensor_list({idx({0}, {1})}, true),
                                              Tensor::zeros({4}, DType::Float64), Value(false)});
            }),
            "Index put requires the source and destination dtypes match, got Float for the "
            "destination and Double for the source.");
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index_put.default", {Tensor::zeros({3, 4}, DType::Float32),
                                              Value::tensor_list({idx({0}, {1})}, true),
                                              Tensor::zeros({3}, DType::Float32), Value(false)});
            }),
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
            "shape [1, 4]");
}

TEST(IndexingOps, SelectAddMaskedScatter) {
  const Tensor x = arange(12, {3, 4});
  EXPECT_EQ(values_of(run1("aten.index_select.default", {x, Value(1), idx({3, 0}, {2})})),
            std::vector<double>({3, 0, 7, 4, 11, 8}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index_select.default", {x, Value(0), idx({-1}, {1})});
            }),
            "index out of range in self");
  EXPECT_EQ(
      values_of(run1("aten.index_add.default", {Tensor::zeros({3, 2}, DType::Float32), Value(0),
                                                idx({2, 0, 2}, {3}), arange(6, {3, 2}), Value(2)})),
      std::vector<double>({4, 6, 0, 0, 8, 12}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.index_add.default",
                   {x, Value(0), idx({1}, {1}), Tensor::zeros({1, 4}, DType::Int64), Value(1)});
            }),
            "index_add_(): self (Float) and source (Long) must have the same scalar type");
  // The mask broadcasts against self; source is read in row-major order of the true positions.
  EXPECT_EQ(
      values_of(run1("aten.masked_scatter.default",
                     {Tensor::zeros({2, 3}, DType::Float32), tensor({1, 0, 1}, {3}, DType::Bool),
                      tensor({1, 2, 3, 4, 5, 6}, {6}, DType::Float32)})),
      std::vector<double>({1, 0, 2, 3, 0, 4}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.masked_scatter.default",
                   {Tensor::zeros({3}, DType::Float32), Tensor::full({3}, 1, DType::Bool),
                    Tensor::zeros({2}, DType::Float32)});
            }),
            "Number of elements of source < number of ones in mask");
}

TEST(IndexingOps, IndexRolesAndOutOfRangeCases) {
  for (const char* name : {"aten.gather.default", "aten.scatter.src", "aten.scatter_add.default",
                           "aten.index_select.default", "aten.index_add.default"}) {
    const OpDef& op = indexing_ops().get(name);
    EXPECT_EQ(op.role_of("index").kind, ArgRole::Kind::IndexInto) << name;
  }
  EXPECT_TRUE(indexing_ops().get("aten.index.Tensor").role_of("indices").allow_negative);
  // Every op with an index argument has an out-of-range case that raises.
  for (const OpDef* op : indexing_ops().all()) {
    if (op->name == "aten.masked_scatter.default") continue;
    bool has_oob = false;
    for (const Sample& s : op->samples(SampleContext{false}))
      if (s.label.find("out of range") != std::string::npos) has_oob = true;
    EXPECT_TRUE(has_oob) << op->name;
  }
}

TEST(IndexingOps, SamplesMaterialiseAndRaiseAsLabelled) { check_all_samples(indexing_ops()); }

}  // namespace
}  // namespace crucible
