// The meta layer agrees with the reference on every case crucible generates: for every opinfo
// case and a spread of every op's real-model calls, the meta function's outputs (shape, dtype,
// strides, which argument each output aliases, numbers) are what the reference returns, and it
// raises exactly when the reference raises, with the same error (the reference's value checks
// excepted: an index out of range is no meta function's business).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "crucible/suites/suite.h"

namespace crucible {
namespace {

struct Outcome {
  Values values;
  std::optional<std::string> error;  // "kind: message" when it raised
};

Outcome run(const std::function<Values()>& fn) {
  Outcome o;
  try {
    o.values = fn();
  } catch (const Error& e) {
    o.error = fmt::format("{}: {}", error_kind_name(e.kind()), e.what());
  }
  return o;
}

// The index of the argument (or of the tensor-list argument holding the tensor) whose storage
// `t` shares, or -1.
int alias_of(const Tensor& t, const Values& args) {
  if (!t.defined()) return -1;
  for (size_t i = 0; i < args.size(); ++i) {
    const Value& a = args[i];
    if (a.is_tensor() && a.tensor().defined() && t.shares_storage(a.tensor()))
      return static_cast<int>(i);
    if (a.kind() == ValueKind::TensorList || a.kind() == ValueKind::OptTensorList)
      for (const Tensor& x : a.tensors())
        if (x.defined() && t.shares_storage(x)) return static_cast<int>(i);
  }
  return -1;
}

// Strides matter where they change the layout: dims of size 1 may carry any stride, and an
// empty tensor has no layout.
bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0) return true;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  return true;
}

// Why the meta tensor `m` does not describe the reference's tensor `r`, or "".
std::string tensor_mismatch(const OpDef& op, const Tensor& m, const Values& margs, const Tensor& r,
                            const Values& rargs) {
  if (m.defined() != r.defined())
    return fmt::format("meta output is {}defined, the reference's is {}defined",
                       m.defined() ? "" : "un", r.defined() ? "" : "un");
  if (!r.defined()) return "";
  if (m.dtype() != r.dtype())
    return fmt::format("dtype {} (meta) vs {} (reference)", dtype_code(m.dtype()),
                       dtype_code(r.dtype()));
  if (op.data_dependent) {
    if (m.dim() != r.dim())
      return fmt::format("rank {} (meta) vs {} (reference)", m.dim(), r.dim());
    for (int64_t d = 0; d < r.dim(); ++d)
      if (r.size(d) > m.size(d))
        return fmt::format("size {} (meta, an upper bound) vs {} (reference)", shape_str(m.shape()),
                           shape_str(r.shape()));
  } else {
    if (m.shape() != r.shape())
      return fmt::format("shape {} (meta) vs {} (reference)", shape_str(m.shape()),
                         shape_str(r.shape()));
    if (!same_layout(m, r))
      return fmt::format("strides {} (meta) vs {} (reference)", shape_str(m.strides()),
                         shape_str(r.strides()));
  }
  const int ma = alias_of(m, margs), ra = alias_of(r, rargs);
  if (ma != ra)
    return fmt::format("aliases argument {} (meta) vs {} (reference; -1: none)", ma, ra);
  if (ra >= 0 && !op.data_dependent && m.offset() != r.offset())
    return fmt::format("storage offset {} (meta) vs {} (reference)", m.offset(), r.offset());
  return "";
}

std::string value_mismatch(const OpDef& op, const Value& m, const Values& margs, const Value& r,
                           const Values& rargs) {
  if (r.is_tensor()) {
    if (!m.is_tensor()) return fmt::format("a {} (meta) for a tensor", value_kind_name(m.kind()));
    return tensor_mismatch(op, m.tensor(), margs, r.tensor(), rargs);
  }
  if (r.kind() == ValueKind::TensorList || r.kind() == ValueKind::OptTensorList) {
    if (m.kind() != ValueKind::TensorList && m.kind() != ValueKind::OptTensorList)
      return fmt::format("a {} (meta) for a tensor list", value_kind_name(m.kind()));
    if (m.tensors().size() != r.tensors().size() && !op.data_dependent)
      return fmt::format("{} tensors (meta) vs {} (reference)", m.tensors().size(),
                         r.tensors().size());
    for (size_t i = 0; i < r.tensors().size() && i < m.tensors().size(); ++i) {
      std::string why = tensor_mismatch(op, m.tensors()[i], margs, r.tensors()[i], rargs);
      if (!why.empty()) return fmt::format("item {}: {}", i, why);
    }
    return "";
  }
  if (m.kind() != r.kind())
    return fmt::format("a {} (meta) vs a {} (reference)", value_kind_name(m.kind()),
                       value_kind_name(r.kind()));
  if (!op.data_dependent && m.debug_str() != r.debug_str())
    return fmt::format("{} (meta) vs {} (reference)", m.debug_str(), r.debug_str());
  return "";
}

// Why meta and reference disagree on one case, or "".
std::string disagreement(const OpDef& op, const Case& c) {
  const Values inputs = materialize(op, c.call, c.seed);
  Values margs = deep_copy(inputs), rargs = deep_copy(inputs);
  const Outcome m = run([&] { return op.run_meta(margs); });
  const Outcome r = run([&] { return op.run_ref(rargs, c.seed); });
  if (m.error && r.error)
    return *m.error == *r.error
               ? ""
               : fmt::format("meta raised «{}», the reference «{}»", *m.error, *r.error);
  if (m.error) return fmt::format("meta raised «{}», the reference returned", *m.error);
  if (r.error)
    return op.value_checks ? ""
                           : fmt::format(
                                 "the reference raised «{}», meta returned (a check missing from "
                                 "the meta function; or declare value_checks)",
                                 *r.error);
  if (m.values.size() != r.values.size())
    return fmt::format("{} outputs (meta) vs {} (reference)", m.values.size(), r.values.size());
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::string why = value_mismatch(op, m.values[i], margs, r.values[i], rargs);
    if (!why.empty()) return fmt::format("output {}: {}", i, why);
  }
  if (op.data_dependent) return "";
  // The meta function needs no data: on meta tensor arguments (the `meta` device) it gives the
  // same outputs, and the cost model over them is the cost over the reference's outputs.
  Values meta_args = materialize_meta(op, c.call);
  const Outcome mm = run([&] { return op.run_meta(meta_args); });
  if (mm.error) return fmt::format("on meta tensor arguments, meta raised «{}»", *mm.error);
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::string why = value_mismatch(op, mm.values[i], meta_args, r.values[i], rargs);
    if (!why.empty()) return fmt::format("on meta tensor arguments, output {}: {}", i, why);
  }
  Cost from_meta, from_ref = op.run_cost(rargs, r.values);
  try {
    from_meta = op.run_cost(meta_args, mm.values);
  } catch (const Error& e) {
    return fmt::format("the cost model reads data: «{}» on meta tensors", e.what());
  }
  if (from_meta.flops != from_ref.flops || from_meta.bytes != from_ref.bytes)
    return fmt::format("cost over meta outputs {} FLOPs {} bytes, over the reference's {} {}",
                       from_meta.flops, from_meta.bytes, from_ref.flops, from_ref.bytes);
  return "";
}

std::vector<std::string> families() {
  std::set<std::string> f;
  for (const OpDef* op : OpRegistry::catalog().all()) f.insert(op->family);
  return {f.begin(), f.end()};
}

// Every opinfo case of the family's ops, and up to 8 real-model calls per op within the default
// caps (the traces shipped in data/).
std::vector<SuiteCase> family_cases(const std::string& family) {
  std::vector<std::string> ops;
  for (const OpDef* op : OpRegistry::catalog().all())
    if (op->family == family) ops.push_back(op->name);
  SuiteOptions o;
  o.suite = "opinfo";
  o.ops = ops;
  std::vector<SuiteCase> cases = build_suite(o);
  static const std::vector<SuiteCase> traces = [] {
    SuiteOptions t;
    t.suite = std::string("traces:") + CRUCIBLE_SOURCE_DIR + "/data/traces";
    t.calls_per_op = 8;
    t.max_numel = int64_t{1} << 22;
    t.max_flops = 2e8;
    return build_suite(t);
  }();
  for (const SuiteCase& sc : traces)
    if (sc.op && sc.op->family == family && sc.skip_reason.empty()) cases.push_back(sc);
  return cases;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s.empty() ? "none" : s;
}

class MetaAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(MetaAgreement, MetaDescribesWhatTheReferenceReturnsAndRaisesWhenItRaises) {
  const std::vector<SuiteCase> cases = family_cases(GetParam());
  ASSERT_FALSE(cases.empty());
  std::map<std::string, int> failures_per_op;
  int checked = 0;
  for (const SuiteCase& sc : cases) {
    if (!sc.op || !sc.skip_reason.empty()) continue;
    if (!sc.op->meta) {
      if (failures_per_op[sc.op->name]++ == 0)
        ADD_FAILURE() << sc.op->name << " has no meta function";
      continue;
    }
    ++checked;
    const std::string why = disagreement(*sc.op, sc.c);
    if (!why.empty() && failures_per_op[sc.op->name]++ < 3)
      ADD_FAILURE() << sc.op->name << " " << cases::print_call(sc.c.call) << " (" << sc.c.source
                    << "): " << why;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, MetaAgreement, ::testing::ValuesIn(families()), param_name);

TEST(MetaTensors, HaveShapeStridesAndDtypeButNoData) {
  Tensor t = Tensor::meta_strided({2, 3}, {1, 2}, DType::Float16);
  EXPECT_TRUE(t.is_meta());
  EXPECT_EQ(t.device().str(), "meta");
  EXPECT_EQ(t.numel(), 6);
  EXPECT_FALSE(t.is_contiguous());
  Tensor v = t.transpose(0, 1);
  EXPECT_TRUE(v.is_meta());
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_THROW(t.data_ptr(), Error);
  EXPECT_EQ(parse_device("meta"), Device::meta());
}

}  // namespace
}  // namespace crucible
