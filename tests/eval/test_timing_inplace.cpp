// Timing an in-place op: each call sees the call's own values, not the previous sample's result.
#include <gtest/gtest.h>

#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/op.h"
#include "crucible/results/result.h"

namespace crucible {
namespace {

// A cpu backend whose mul_ multiplies self by 3 in place and records self's first element as
// each call finds it.
class RecordingMul final : public Backend {
 public:
  std::string name() const override { return "recording"; }
  std::string version() const override { return "test"; }
  bool has_op(const OpDef&) const override { return true; }
  std::vector<DType> supported_dtypes(const OpDef& op) const override { return op.dtypes; }
  Values run(const OpDef&, const Values& args) override {
    const Tensor& self = args.at(0).tensor();
    seen.push_back(self.get(0));
    for (int64_t i = 0; i < self.numel(); ++i) self.set(i, self.get(i) * 3);
    return {Value(self)};
  }
  std::vector<double> seen;
};

TEST(TimingInplace, EveryCallSeesTheCallsOwnValues) {
  const OpDef* op = OpRegistry::catalog().find("aten.mul_.Tensor");
  ASSERT_NE(op, nullptr);
  Case c;
  c.op = op->name;
  c.call = cases::parse_call("((T([4, 8], f32), T([4, 8], f32)), {})");
  for (bool cold : {false, true}) {
    RecordingMul candidate, baseline;
    TimingOptions o;
    o.cold_cache = cold;
    o.settle_threads = false;
    o.min_samples = 6;
    o.max_samples = 6;
    o.max_wall_seconds = 1;
    const TimingRecord rec = time_case(c, *op, candidate, baseline, o);
    EXPECT_EQ(rec.error, "");
    for (const RecordingMul* b : {&candidate, &baseline}) {
      ASSERT_GT(b->seen.size(), 6u);
      for (double v : b->seen) EXPECT_EQ(v, b->seen.front()) << "a call saw an earlier result";
    }
    EXPECT_NE(candidate.seen.front(), 0.0);  // so tripling it would show
  }
}

}  // namespace
}  // namespace crucible
