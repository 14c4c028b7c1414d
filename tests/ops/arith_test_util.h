// Test helpers shared by test_arithmetic.cpp, test_comparison.cpp, test_where.cpp and
// test_loss.cpp: tensor builders, error capture and the per-family sample checks.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"

namespace crucible::arith_test {

inline Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}
inline Tensor vec(const std::vector<double>& vals, DType t) {
  return tensor(vals, {static_cast<int64_t>(vals.size())}, t);
}
inline Tensor scalar(double v, DType t) { return Tensor::scalar(v, t); }

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
  return out;
}

// The op error message raised by `fn`, or "" when it does not raise.
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

// Every op: family and dtypes set, >= 8 correctness samples with unique labels that round-trip
// through the case grammar, performance samples; every correctness sample materialises and its
// reference raises an op error exactly when its label starts with "error:".
inline void check_family_samples(const OpRegistry& reg) {
  for (const OpDef* op : reg.all()) {
    EXPECT_FALSE(op->family.empty()) << op->name;
    EXPECT_FALSE(op->dtypes.empty()) << op->name;
    const std::vector<Sample> ss = op->samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << op->name;
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
    std::set<std::string> labels;
    for (const Sample& s : ss) {
      EXPECT_TRUE(labels.insert(s.label).second) << op->name << ": duplicate label " << s.label;
      const std::string text = cases::print_call(s.call);
      EXPECT_EQ(cases::print_call(cases::parse_call(text)), text) << op->name;
      Values args;
      try {
        args = materialize(*op, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      const bool must_raise = s.label.starts_with("error:");
      std::string error;
      try {
        const Values out = op->run_ref(args);
        ASSERT_FALSE(out.empty());
        const Cost c = op->run_cost(args, out);
        EXPECT_GE(c.bytes, 0) << op->name;
        if (op->compare.tol_scale) {
          EXPECT_GE(op->compare.tol_scale(args), 1.0) << op->name;
        }
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), must_raise)
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace crucible::arith_test
