// The opinfo suite catches the classic wrong kernels: identity, constant, sign-blind, wrong on
// odd sizes, wrong for non-contiguous input, wrong for one dtype, wrong only on NaN. Each
// adversary wraps the reference and breaks it in one way; for a representative op of every
// family, every adversary must fail at least one opinfo case.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "crucible/backends/backend.h"
#include "crucible/eval/evaluate.h"

namespace crucible {
namespace {

enum class Fault { Identity, Constant, SignBlind, OddSizes, NonContiguous, OneDType, NaNOnly };

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::Identity: return "identity";
    case Fault::Constant: return "constant";
    case Fault::SignBlind: return "sign-blind";
    case Fault::OddSizes: return "wrong on odd sizes";
    case Fault::NonContiguous: return "wrong for non-contiguous input";
    case Fault::OneDType: return "wrong for one dtype";
    case Fault::NaNOnly: return "wrong only on NaN";
  }
  return "?";
}

// Nudges one element so that it is wrong beyond any tolerance.
void corrupt(const Tensor& t) {
  if (t.numel() == 0) return;
  const int64_t i = t.numel() - 1;
  if (t.dtype() == DType::Bool)
    t.set_int(i, 1 - t.get_int(i));
  else if (is_floating(t.dtype()))
    t.set(i, std::isfinite(t.get(i)) ? t.get(i) * 2 + 1 : 0.0);
  else
    t.set_int(i, t.get_int(i) + 1);
}

void for_each_output_tensor(const Values& vs, const std::function<void(const Tensor&)>& fn) {
  for (const Value& v : vs) {
    if (v.is_tensor() && v.tensor().defined()) fn(v.tensor());
    if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
      for (const Tensor& t : v.tensors())
        if (t.defined()) fn(t);
  }
}

class Adversary final : public Backend {
 public:
  Adversary(Fault f, DType victim) : fault_(f), victim_(victim) {}
  std::string name() const override { return fault_name(fault_); }
  bool has_op(const OpDef&) const override { return true; }

  Values run(const OpDef& op, const Values& args) override {
    switch (fault_) {
      case Fault::Identity: {
        // Returns (a copy of) its first tensor argument.
        for (const Value& a : args)
          if (a.is_tensor() && a.tensor().defined()) return {Value(a.tensor().clone())};
        return op.run_ref(args, seed_);
      }
      case Fault::SignBlind: {
        // Computes on |x|: a kernel that loses the sign of its inputs.
        Values abs_args = deep_copy(args);
        for (Value& a : abs_args)
          if (a.is_tensor() && a.tensor().defined() && is_floating(a.tensor().dtype())) {
            const Tensor& t = a.tensor();
            for (int64_t i = 0; i < t.numel(); ++i) t.set(i, std::fabs(t.get(i)));
          }
        Values out = op.run_ref(abs_args, seed_);
        // In-place ops must also write the (wrong) result into the caller's argument.
        for (size_t i : op.schema.mutated_arguments())
          if (args[i].is_tensor()) args[i].tensor().copy_from(abs_args[i].tensor());
        return out;
      }
      default: break;
    }
    Values out = op.run_ref(args, seed_);
    bool hit = false;
    switch (fault_) {
      case Fault::Constant:
        for_each_output_tensor(out, [](const Tensor& t) { t.fill(0.5); });
        for (size_t i : op.schema.mutated_arguments())
          if (args[i].is_tensor()) args[i].tensor().fill(0.5);
        return out;
      case Fault::OddSizes:
        for_each_output_tensor(out, [&](const Tensor& t) {
          for (int64_t s : t.shape()) hit |= s % 2 == 1;
        });
        break;
      case Fault::NonContiguous:
        for (const Value& a : args)
          if (a.is_tensor() && a.tensor().defined() && !a.tensor().is_contiguous()) hit = true;
        break;
      case Fault::OneDType:
        for (const Value& a : args)
          if (a.is_tensor() && a.tensor().defined() && a.tensor().dtype() == victim_) hit = true;
        break;
      case Fault::NaNOnly:
        for_each_output_tensor(out, [](const Tensor& t) {
          if (!is_floating(t.dtype())) return;
          for (int64_t i = 0; i < t.numel(); ++i)
            if (std::isnan(t.get(i))) t.set(i, 0.0);
        });
        return out;
      default: break;
    }
    if (hit) {
      for_each_output_tensor(out, corrupt);
      for (size_t i : op.schema.mutated_arguments())
        if (args[i].is_tensor()) corrupt(args[i].tensor());
    }
    return out;
  }

 private:
  Fault fault_;
  DType victim_;
};

// Faults that are not faults for an op (e.g. identity *is* clone) are listed as exempt.
struct Representative {
  const char* op;
  std::set<Fault> exempt;
};

int failures(const OpDef& op, Backend& reference, Backend& candidate) {
  int failed = 0;
  for (const Sample& s : op.samples(SampleContext{})) {
    Case c;
    c.op = op.name;
    c.call = s.call;
    c.seed = 7;
    CaseResult r = evaluate_case(c, op, reference, candidate);
    failed += r.status == Status::Failed;
  }
  return failed;
}

TEST(Adversaries, OpinfoCatchesEveryAdversaryOnARepresentativeOpOfEachFamily) {
  const std::vector<Representative> reps = {
      {"aten.relu.default", {}},
      {"aten.add.Tensor", {}},
      {"aten.clone.default", {Fault::Identity}},  // an identity kernel is a right clone
      {"aten.sum.dim_IntList", {}},
      {"aten.mm.default", {}},
      {"aten._softmax.default", {}},
      {"aten.native_layer_norm.default", {}},
      {"aten.embedding.default", {}},
      {"aten.permute.default", {}},
  };
  auto ref = BackendRegistry::instance().create("ref");
  const OpRegistry& cat = OpRegistry::catalog();
  std::set<std::string> families;
  for (const Representative& rep : reps) {
    const OpDef* op = cat.find(rep.op);
    ASSERT_NE(op, nullptr) << rep.op;
    families.insert(op->family);
    DType victim = op->dtypes.empty() ? DType::Float32 : op->dtypes.back();
    for (Fault f : {Fault::Identity, Fault::Constant, Fault::SignBlind, Fault::OddSizes,
                    Fault::NonContiguous, Fault::OneDType, Fault::NaNOnly}) {
      if (rep.exempt.count(f)) continue;
      if (f == Fault::NaNOnly && !is_floating(victim)) continue;
      Adversary adv(f, victim);
      EXPECT_GT(failures(*op, *ref, adv), 0)
          << rep.op << ": the '" << fault_name(f) << "' kernel passed every opinfo case";
    }
  }
  EXPECT_GE(families.size(), reps.size() - 1);
}

}  // namespace
}  // namespace crucible
