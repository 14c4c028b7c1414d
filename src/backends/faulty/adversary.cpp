// Adversaries wrap the reference and break it in one way. A fault that depends on the call
// (odd sizes, a layout, a dtype, NaN) leaves every other call exactly right, so the opinfo
// suite must have a case that triggers it.
#include "backends/faulty/adversary.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <map>

namespace crucible {

namespace {

void for_each_tensor(const Values& vs, const std::function<void(const Tensor&)>& fn) {
  for (const Value& v : vs) {
    if (v.is_tensor() && v.tensor().defined()) fn(v.tensor());
    if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
      for (const Tensor& t : v.tensors())
        if (t.defined()) fn(t);
  }
}

// Makes one element wrong beyond any tolerance: NaN where the value is a number, 0 where it
// is NaN, the next integer, the other bool.
void corrupt(const Tensor& t) {
  if (t.numel() == 0) return;
  const int64_t i = t.numel() - 1;
  if (t.dtype() == DType::Bool) {
    t.set_int(i, 1 - t.get_int(i));
  } else if (is_complex(t.dtype())) {
    const std::complex<double> z = t.get_complex(i);
    t.set_complex(
        i, std::isnan(z.real()) ? std::complex<double>(0, 0) : std::complex<double>(NAN, z.imag()));
  } else if (is_floating(t.dtype())) {
    t.set(i, std::isnan(t.get(i)) ? 0.0 : NAN);
  } else {
    t.set_int(i, t.get_int(i) + 1);
  }
}

void corrupt_outputs(Values& out) {
  for_each_tensor(out, corrupt);
  for (Value& v : out) {
    if (v.kind() == ValueKind::Int) v = Value(v.to_int() + 1);
    if (v.kind() == ValueKind::Float) v = Value(std::isnan(v.to_double()) ? 0.0 : NAN);
    if (v.kind() == ValueKind::Bool) v = Value(!v.to_bool());
  }
}

void make_constant(Values& out) {
  for_each_tensor(out, [](const Tensor& t) { t.fill(0.5); });
  for (Value& v : out) {
    if (v.kind() == ValueKind::Int) v = Value(int64_t{0});
    if (v.kind() == ValueKind::Float) v = Value(0.5);
    if (v.kind() == ValueKind::Bool) v = Value(true);
  }
}

// Rewrites the elements of every floating tensor argument with `fn`; true when any changed.
bool transform_floating(const Values& args, const std::function<double(double)>& fn) {
  bool changed = false;
  for_each_tensor(args, [&](const Tensor& t) {
    if (!is_floating(t.dtype()) && !is_complex(t.dtype())) return;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_complex(t.dtype())) {
        const std::complex<double> z = t.get_complex(i);
        const std::complex<double> w(fn(z.real()), fn(z.imag()));
        if (std::memcmp(&z, &w, sizeof z) == 0) continue;
        t.set_complex(i, w);
      } else {
        const double x = t.get(i);
        const double y = fn(x);
        if (std::memcmp(&x, &y, sizeof x) == 0) continue;
        t.set(i, y);
      }
      changed = true;
    }
  });
  return changed;
}

class Adversary final : public Backend {
 public:
  Adversary(Fault f, DType victim) : fault_(f), victim_(victim) {}
  std::string name() const override { return fault_name(fault_); }
  bool has_op(const OpDef&) const override { return true; }

  Values run(const OpDef& op, const Values& args) override {
    switch (fault_) {
      case Fault::Identity:
        return identity(op, args);
      case Fault::SignBlind:
        return on_rewritten_inputs(op, args, [](double x) { return std::fabs(x); });
      case Fault::NaNOnly: {
        Values out =
            on_rewritten_inputs(op, args, [](double x) { return std::isnan(x) ? 0.0 : x; });
        // NaN results become 0: in fresh outputs and in mutated arguments (not in views of
        // arguments the op must leave alone, which hold the caller's own values).
        auto zero_nan = [](const Tensor& t) {
          if (is_complex(t.dtype())) {
            for (int64_t i = 0; i < t.numel(); ++i) {
              const std::complex<double> z = t.get_complex(i);
              if (std::isnan(z.real()) || std::isnan(z.imag()))
                t.set_complex(i, {std::isnan(z.real()) ? 0.0 : z.real(),
                                  std::isnan(z.imag()) ? 0.0 : z.imag()});
            }
          } else if (is_floating(t.dtype())) {
            for (int64_t i = 0; i < t.numel(); ++i)
              if (std::isnan(t.get(i))) t.set(i, 0.0);
          }
        };
        for_each_tensor(out, [&](const Tensor& t) {
          bool view_of_arg = false;
          for_each_tensor(args, [&](const Tensor& a) { view_of_arg |= t.shares_storage(a); });
          if (!view_of_arg) zero_nan(t);
        });
        for (size_t i : op.schema.mutated_arguments())
          if (args[i].is_tensor() && args[i].tensor().defined()) zero_nan(args[i].tensor());
        return out;
      }
      default:
        break;
    }
    Values out = op.run_ref(args, seed_);
    if (fault_ == Fault::Constant) {
      make_constant(out);
      for (size_t i : op.schema.mutated_arguments())
        if (args[i].is_tensor() && args[i].tensor().defined()) args[i].tensor().fill(0.5);
      return out;
    }
    if (triggered(args, out)) {
      // Each element once: an in-place op returns the argument it mutated.
      std::vector<Tensor> mutated;
      for (size_t i : op.schema.mutated_arguments())
        if (args[i].is_tensor() && args[i].tensor().defined()) mutated.push_back(args[i].tensor());
      for (const Tensor& t : mutated) corrupt(t);
      for (Value& v : out) {
        const bool returned_mutated =
            v.is_tensor() && std::any_of(mutated.begin(), mutated.end(), [&](const Tensor& m) {
              return v.tensor().shares_storage(m);
            });
        if (returned_mutated) continue;
        Values one = {v};
        corrupt_outputs(one);
        v = one[0];
      }
    }
    return out;
  }

 private:
  Values identity(const OpDef& op, const Values& args) {
    for (const Value& a : args) {
      if (a.is_tensor() && a.tensor().defined()) return {Value(a.tensor().clone())};
      if (a.kind() == ValueKind::TensorList && !a.tensors().empty())
        return {Value(a.tensors().front().clone())};
    }
    return op.run_ref(args, seed_);  // nothing to return: the op itself
  }

  // Runs the reference on copies of the arguments rewritten by `fn`. Mutated arguments get
  // the result written back, and outputs that are views of a copy become views of the
  // caller's argument, so that only the values can be wrong.
  Values on_rewritten_inputs(const OpDef& op, const Values& args,
                             const std::function<double(double)>& fn) {
    Values copy = deep_copy(args);
    if (!transform_floating(copy, fn)) return op.run_ref(args, seed_);
    Values out = op.run_ref(copy, seed_);
    std::map<const Storage*, std::shared_ptr<Storage>> home;
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<Tensor> a, c;
      for_each_tensor({args[i]}, [&](const Tensor& t) { a.push_back(t); });
      for_each_tensor({copy[i]}, [&](const Tensor& t) { c.push_back(t); });
      for (size_t k = 0; k < a.size() && k < c.size(); ++k)
        home[c[k].storage().get()] = a[k].storage();
    }
    for (size_t i : op.schema.mutated_arguments())
      if (args[i].is_tensor() && args[i].tensor().defined())
        args[i].tensor().copy_from(copy[i].tensor());
    auto rehome = [&](const Tensor& t) {
      auto it = home.find(t.storage().get());
      if (!t.defined() || it == home.end()) return t;
      return Tensor::from_storage(it->second, t.offset(), t.shape(), t.strides(), t.dtype());
    };
    for (Value& v : out) {
      if (v.is_tensor() && v.tensor().defined()) v = Value(rehome(v.tensor()));
      if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
        std::vector<Tensor> ts;
        for (const Tensor& t : v.tensors()) ts.push_back(rehome(t));
        v = Value::tensor_list(std::move(ts), v.kind() == ValueKind::OptTensorList);
      }
    }
    return out;
  }

  bool triggered(const Values& args, const Values& out) const {
    bool hit = false;
    switch (fault_) {
      case Fault::OddSizes: {
        // A vectorised loop without its tail: wrong when an innermost size is odd.
        auto odd = [&](const Tensor& t) {
          if (t.dim() > 0 && t.size(-1) > 1 && t.size(-1) % 2 == 1) hit = true;
        };
        for_each_tensor(args, odd);
        for_each_tensor(out, odd);
        break;
      }
      case Fault::NonContiguous:
        for_each_tensor(args, [&](const Tensor& t) { hit |= !t.is_contiguous(); });
        break;
      case Fault::OneDType: {
        auto victim = [&](const Tensor& t) { hit |= t.dtype() == victim_; };
        for_each_tensor(args, victim);
        for_each_tensor(out, victim);
        break;
      }
      default:
        break;
    }
    return hit;
  }

  Fault fault_;
  DType victim_;
};

}  // namespace

const std::vector<Fault>& all_faults() {
  static const std::vector<Fault> k = {Fault::Identity, Fault::Constant,      Fault::SignBlind,
                                       Fault::OddSizes, Fault::NonContiguous, Fault::OneDType,
                                       Fault::NaNOnly};
  return k;
}

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::Identity:
      return "identity";
    case Fault::Constant:
      return "constant";
    case Fault::SignBlind:
      return "sign-blind";
    case Fault::OddSizes:
      return "wrong on odd sizes";
    case Fault::NonContiguous:
      return "wrong for non-contiguous input";
    case Fault::OneDType:
      return "wrong for one dtype";
    case Fault::NaNOnly:
      return "wrong only on NaN";
  }
  return "?";
}

std::unique_ptr<Backend> make_adversary(Fault f, DType victim) {
  return std::make_unique<Adversary>(f, victim);
}

}  // namespace crucible
