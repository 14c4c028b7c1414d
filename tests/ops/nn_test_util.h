// Helpers for the tests of the norm, upsample, sampling and padding families.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"

namespace crucible::nntest {

inline const OpRegistry& registry(void (*reg)(OpRegistry&)) {
  auto* r = new OpRegistry();  // leaked on purpose: one per family, alive for the test run
  reg(*r);
  return *r;
}

inline Tensor tensor(const std::vector<double>& vals, const Shape& shape,
                     DType t = DType::Float64) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

inline void expect_values(const Value& v, const std::vector<double>& want, double tol = 1e-9) {
  ASSERT_TRUE(v.is_tensor());
  const Tensor& t = v.tensor();
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.get(static_cast<int64_t>(i)), want[i], tol * (1 + std::fabs(want[i]))) << i;
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

// Every op of `r` has >= 8 correctness samples, each materialises, and the reference raises
// exactly on the cases labelled "error:"; performance samples exist.
inline void check_samples(const OpRegistry& r) {
  for (const OpDef* op : r.all()) {
    const std::vector<Sample> ss = op->samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << op->name;
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
    for (const Sample& s : ss) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*op, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
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
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace crucible::nntest
