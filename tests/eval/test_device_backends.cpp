// Device backends in the evaluator: every tensor argument reaches the device before the timed
// calls, and every backend's device outputs are judged from their host copies.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/op.h"
#include "crucible/results/result.h"

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
    auto s =
        std::make_shared<Storage>(bytes->data(), bytes->size(), Device::cuda(0), [bytes](void*) {});
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

// A reference on "cuda:0" that keeps its results where the host cannot read them: the memory its
// output tensors point at holds NaN, and only to_host gives the values (as cudaMemcpy would).
class DeviceReference final : public Backend {
 public:
  std::string name() const override { return "device-reference"; }
  std::string version() const override { return "test"; }
  Device device() const override { return Device::cuda(0); }
  bool has_op(const OpDef&) const override { return true; }
  std::vector<DType> supported_dtypes(const OpDef& op) const override { return op.dtypes; }
  Values run(const OpDef& op, const Values& args) override {
    Values out;
    for (const Value& v : op.run_ref(args, 0)) {
      if (!v.is_tensor()) {
        out.push_back(v);
        continue;
      }
      const Tensor host = v.tensor().clone();
      auto unreadable = std::make_shared<std::vector<double>>(
          host.storage()->nbytes() / sizeof(double) + 1, std::nan(""));
      auto s = std::make_shared<Storage>(unreadable->data(), host.storage()->nbytes(),
                                         Device::cuda(0), [unreadable](void*) {});
      Tensor dev = Tensor::from_storage(s, 0, host.shape(), host.strides(), host.dtype());
      on_host_[s.get()] = host;
      out.push_back(Value(dev));
    }
    return out;
  }
  Tensor to_host(const Tensor& t) override {
    auto it = on_host_.find(t.storage().get());
    return it == on_host_.end() ? t : it->second;
  }

 private:
  std::map<const Storage*, Tensor> on_host_;
};

TEST(DeviceReference, AFactoryCallsDeviceOutputsAreJudgedFromTheirHostCopies) {
  const OpDef* op = OpRegistry::catalog().find("aten.arange.default");
  ASSERT_NE(op, nullptr);
  Case c;
  c.op = op->name;
  c.call = cases::parse_call("((16,), {'dtype': f64, 'device': 'cpu'})");
  DeviceReference reference;
  auto candidate = BackendRegistry::instance().create("ref");
  const CaseResult r = evaluate_case(c, *op, reference, *candidate);
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
}

}  // namespace
}  // namespace crucible
