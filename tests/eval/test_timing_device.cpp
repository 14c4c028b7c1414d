// Timing on a device backend: every tensor argument reaches the device before the timed calls.
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/op.h"

namespace crucible {
namespace {

// A backend on "cuda:0" whose device memory is host memory labelled so: it refuses any call
// with a tensor that did not come through to_device, as a call would otherwise upload it.
class LabelledDevice final : public Backend {
 public:
  std::string name() const override { return "labelled"; }
  std::string version() const override { return "test"; }
  Device device() const override { return Device::cuda(0); }
  bool has_op(const OpDef&) const override { return true; }
  std::vector<DType> supported_dtypes(const OpDef& op) const override { return op.dtypes; }
  Tensor to_device(const Tensor& host) override {
    auto bytes = std::make_shared<std::vector<char>>(host.storage()->nbytes());
    std::memcpy(bytes->data(), host.storage()->data(), bytes->size());
    auto s = std::make_shared<Storage>(bytes->data(), bytes->size(), Device::cuda(0),
                                       [bytes](void*) {});
    return Tensor::from_storage(s, host.offset(), host.shape(), host.strides(), host.dtype());
  }
  Values run(const OpDef&, const Values& args) override {
    for (const Value& v : args) {
      if (v.is_tensor() && v.tensor().device().is_cpu()) op_error("a host tensor argument");
      if (v.kind() == ValueKind::TensorList)
        for (const Tensor& t : v.tensors())
          if (t.device().is_cpu()) op_error("a host tensor in a list argument");
    }
    ++calls;
    return {};
  }
  int calls = 0;
};

TEST(TimingOnADevice, TensorsInListsAreOnTheDeviceBeforeTheTimedCalls) {
  const OpDef* op = OpRegistry::catalog().find("aten.cat.default");
  ASSERT_NE(op, nullptr);
  Case c;
  c.op = op->name;
  c.call = cases::parse_call("(([T([4, 8], f32), T([4, 8], f32)], 1), {})");
  LabelledDevice candidate, baseline;
  TimingOptions o;
  o.cold_cache = false;
  o.settle_threads = false;
  o.min_samples = 2;
  o.max_samples = 2;
  o.max_wall_seconds = 1;
  const TimingRecord rec = time_case(c, *op, candidate, baseline, o);
  EXPECT_EQ(rec.error, "");
  EXPECT_GT(candidate.calls, 2);
  EXPECT_GT(baseline.calls, 2);
  EXPECT_GT(rec.speedup, 0);
}

}  // namespace
}  // namespace crucible
