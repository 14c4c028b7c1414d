// The correctness samples of derived in-place and out= overloads (variant_samples.h).
#include "ops/variant_samples.h"

#include <algorithm>
#include <optional>
#include <set>

#include "crucible/core/dispatch.h"
#include "crucible/core/dtype.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using cases::Literal;
using cases::LitKind;
using samples::T;

constexpr size_t kComputing = 6;  // computing samples taken from the functional op
constexpr size_t kErrors = 2;     // error samples taken from the functional op

bool is_error(const Sample& s) { return s.label.starts_with("error"); }

// The element count of the call's largest tensor (lists included).
int64_t largest_tensor(const cases::CallSpec& call) {
  int64_t m = 0;
  auto count = [&m](const cases::TensorLit& t) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    m = std::max(m, n);
  };
  for (const Literal& l : call.args) {
    if (l.kind == LitKind::Tensor) count(l.tensor);
    for (const Literal& item : l.items)
      if (item.kind == LitKind::Tensor) count(item.tensor);
  }
  return m;
}

std::optional<DType> first_tensor_dtype(const cases::CallSpec& call) {
  for (const Literal& l : call.args)
    if (l.kind == LitKind::Tensor) return l.tensor.dtype;
  return std::nullopt;
}

// The functional op's results for a sample (meta tensors), or nothing when it does not compute.
std::optional<Values> results_of(const OpDef& f, const cases::CallSpec& call) {
  try {
    return f.run_meta(materialize_meta(f, call));
  } catch (const Error&) {
    return std::nullopt;
  }
}

// A destination literal like `t`: contiguous, or with its last two dims laid out transposed.
Literal destination(const Tensor& t, bool transposed, DType dtype) {
  if (!transposed || t.dim() < 2) return T(t.shape(), dtype);
  Shape swapped = t.shape();
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  Shape strides = contiguous_strides(swapped);
  std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return T(t.shape(), dtype, strides);
}

// The call of the out= overload: the functional call (a factory's TensorOptions keywords
// dropped) with one destination per result.
cases::CallSpec with_destinations(const OpDef& variant, const DerivedVariant& v,
                                  cases::CallSpec call, const Values& results, bool transposed,
                                  std::optional<DType> dtype = std::nullopt) {
  if (v.rule == WriteRule::Factory)
    std::erase_if(call.kwargs, [](const auto& kw) { return is_tensor_option(kw.first); });
  for (size_t k = 0; k < v.destinations.size() && k < results.size(); ++k) {
    const std::string& name = variant.schema.arguments[v.destinations[k]].name;
    const Value& r = results[k];
    if (r.is_tensor()) {
      call.kwargs.emplace_back(
          name, destination(r.tensor(), transposed, dtype.value_or(r.tensor().dtype())));
    } else {
      std::vector<Literal> items;
      for (const Tensor& t : r.tensors())
        items.push_back(destination(t, transposed, dtype.value_or(t.dtype())));
      call.kwargs.emplace_back(name, Literal::list(std::move(items)));
    }
  }
  return call;
}

bool expanded(const cases::TensorLit& t) {
  if (!t.strides) return false;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if ((*t.strides)[d] == 0 && t.shape[d] > 1) return true;
  return false;
}

// Why self cannot take the result in place (ATen raises), or nothing.
std::optional<std::string> inplace_refusal(const DerivedVariant& v, const cases::TensorLit& self,
                                           const Tensor& result) {
  if (expanded(self)) return "self expanded (internal overlap)";
  if (result.shape() != self.shape) return "self would broadcast to " + shape_str(result.shape());
  if (v.rule == WriteRule::Cast && !can_cast(result.dtype(), self.dtype))
    return "result " + scalar_type_name(result.dtype()) + " can't be cast to self " +
           scalar_type_name(self.dtype);
  return std::nullopt;
}

// A dtype the result can be cast to (Cast rule), other than its own, and that holds it exactly
// (so that the comparison's tolerance, the destination dtype's, stays right): integral and bool
// results only.
std::optional<DType> wider(DType t) {
  if (t == DType::Bool) return DType::Int32;
  if (is_integral(t, false)) return t == DType::Int64 ? DType::Float64 : DType::Int64;
  return std::nullopt;
}

// A dtype the result cannot be cast to, if any.
std::optional<DType> narrower(DType t) {
  if (t == DType::Bool) return std::nullopt;
  if (is_integral(t, false)) return DType::Bool;
  return DType::Int64;
}

// Whether a result the out= overload would write is missing (convolution_backward with an
// output_mask entry false returns None there): such a call has no destination to give.
bool misses_a_result(const DerivedVariant& v, const Values& results) {
  for (size_t k = 0; k < v.destinations.size() && k < results.size(); ++k)
    if (results[k].is_none()) return true;
  return false;
}

// The functional op's performance samples made into the variant's. Here and below, an in-place
// overload's destination is the first positional literal of the case (self, whatever the op),
// so it is read by position.
std::vector<Sample> performance_samples(const OpDef& variant, const DerivedVariant& v) {
  const OpDef& f = *v.functional;
  std::vector<Sample> out;
  for (const Sample& s : f.samples(SampleContext{true})) {
    const std::optional<Values> res = results_of(f, s.call);
    if (!res || res->empty()) continue;
    Sample d = s;
    if (v.inplace) {
      if (s.call.args.empty() || s.call.args[0].kind != LitKind::Tensor ||
          !res->at(0).is_tensor() ||
          inplace_refusal(v, s.call.args[0].tensor, res->at(0).tensor()) ||
          res->at(0).tensor().dtype() != s.call.args[0].tensor.dtype)
        continue;
    } else {
      if (misses_a_result(v, *res)) continue;
      d.call = with_destinations(variant, v, s.call, *res, false);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::vector<Sample> variant_samples(const OpDef& variant, const DerivedVariant& v,
                                    const SampleContext& ctx) {
  if (ctx.performance) return performance_samples(variant, v);
  const OpDef& f = *v.functional;
  const std::vector<Sample> own = f.samples(SampleContext{});
  // The computing samples to take: one per first-tensor dtype first, then in order.
  std::vector<const Sample*> picked;
  std::set<int> dtypes_seen;
  for (int pass = 0; pass < 2 && picked.size() < kComputing; ++pass)
    for (const Sample& s : own) {
      if (picked.size() >= kComputing) break;
      if (is_error(s) || std::find(picked.begin(), picked.end(), &s) != picked.end()) continue;
      const int d = static_cast<int>(first_tensor_dtype(s.call).value_or(DType::Float32));
      if (pass == 0 && !dtypes_seen.insert(d).second) continue;
      picked.push_back(&s);
    }

  // Then what the suites ask of every op (tests/ops/test_sample_regions.cpp): a large case and
  // each value regime (fill) the functional op's samples draw in.
  auto pick = [&picked](const Sample& s) {
    if (std::find(picked.begin(), picked.end(), &s) == picked.end()) picked.push_back(&s);
  };
  // (Up to three large ones: in place, self may be unable to take the first one's result.)
  int large = 0;
  for (const Sample& s : own)
    if (!is_error(s) && largest_tensor(s.call) >= 40000 && large++ < 3) pick(s);
  std::set<std::string> fills;
  for (const Sample* s : picked)
    for (const Literal& l : s->call.args)
      if (l.kind == LitKind::Tensor && l.tensor.fill) fills.insert(*l.tensor.fill);
  for (const Sample& s : own) {
    if (is_error(s)) continue;
    for (const Literal& l : s.call.args)
      if (l.kind == LitKind::Tensor && l.tensor.fill && fills.insert(*l.tensor.fill).second)
        pick(s);
  }

  std::vector<Sample> out;
  size_t inplace_errors = 0;
  bool rule_cases = false;
  for (const Sample* s : picked) {
    const std::optional<Values> res = results_of(f, s->call);
    if (!res || res->empty()) continue;
    if (v.inplace) {
      if (s->call.args.empty() || s->call.args[0].kind != LitKind::Tensor ||
          !res->at(0).is_tensor())
        continue;
      const Tensor& r = res->at(0).tensor();
      const auto why = inplace_refusal(v, s->call.args[0].tensor, r);
      if (!why) {
        if (r.dtype() != s->call.args[0].tensor.dtype && v.rule != WriteRule::Cast) continue;
        Sample d = *s;
        d.label = "in place, " + s->label;
        out.push_back(std::move(d));
      } else if (v.rule == WriteRule::Cast && inplace_errors < kErrors) {
        Sample d = *s;
        d.label = "error: " + *why + ", " + s->label;
        out.push_back(std::move(d));
        ++inplace_errors;
      }
      continue;
    }
    if (misses_a_result(v, *res)) continue;
    const bool transposed = out.size() % 3 == 2;
    Sample d = *s;
    d.call = with_destinations(variant, v, s->call, *res, transposed);
    d.label = std::string(transposed ? "out transposed, " : "out, ") + s->label;
    out.push_back(std::move(d));
    // The rule's own cases, once: an out of a wider dtype (Cast: written converted; Same:
    // refused), and one the result cannot be cast to (Cast).
    const bool iterator = v.rule == WriteRule::Cast || v.rule == WriteRule::Same;
    if (iterator && !rule_cases && res->at(0).is_tensor()) {
      rule_cases = true;
      const DType rt = res->at(0).tensor().dtype();
      const DType wd = wider(rt).value_or(rt == DType::Float64 ? DType::Float32 : DType::Float64);
      // Same: any other dtype is refused; Cast: an exact one is written converted.
      if (v.rule == WriteRule::Same || wider(rt)) {
        Sample w = *s;
        w.call = with_destinations(variant, v, s->call, *res, false, wd);
        w.label = v.rule == WriteRule::Cast
                      ? "out " + std::string(dtype_code(wd)) + " (cast), " + s->label
                      : "error: out " + std::string(dtype_code(wd)) + " for a " +
                            std::string(dtype_code(rt)) + " result, " + s->label;
        out.push_back(std::move(w));
      }
      if (const auto n = narrower(rt); n && v.rule == WriteRule::Cast) {
        Sample e = *s;
        e.call = with_destinations(variant, v, s->call, *res, false, *n);
        e.label = "error: result " + scalar_type_name(rt) + " can't be cast to out " +
                  scalar_type_name(*n) + ", " + s->label;
        out.push_back(std::move(e));
      }
    }
  }
  // In place, self may take none of the functional op's large results (b8 & 6 is i64): a
  // computing case whose only tensor is self, grown past 40000 elements.
  const auto is_large = [](const Sample& d) {
    return !is_error(d) && largest_tensor(d.call) >= 40000;
  };
  if (v.inplace && std::none_of(out.begin(), out.end(), is_large)) {
    for (const Sample& d : std::vector<Sample>(out)) {
      if (is_error(d) || d.call.args.empty() || d.call.args[0].tensor.shape.empty()) continue;
      const auto tensors = std::count_if(
          d.call.args.begin(), d.call.args.end(),
          [](const Literal& l) { return l.kind == LitKind::Tensor || !l.items.empty(); });
      if (tensors != 1 || d.call.args[0].tensor.strides) continue;
      Sample g = d;
      Shape& shape = g.call.args[0].tensor.shape;
      const int64_t rest =
          std::max<int64_t>(1, largest_tensor(g.call) / std::max<int64_t>(1, shape[0]));
      shape[0] = 40000 / rest + 1;
      g.label = "large, " + d.label;
      out.push_back(std::move(g));
      break;
    }
  }
  // The functional op's errors raise through the variant too (a factory's mostly concern the
  // TensorOptions its out= overload does not have).
  size_t errors = 0;
  for (const Sample& s : own) {
    if (v.rule == WriteRule::Factory) break;
    if (errors >= kErrors) break;
    if (!is_error(s) || s.cpu_only_error) continue;
    Sample d = s;
    if (!v.inplace) {
      if (const std::optional<Values> res = results_of(f, s.call)) {
        // An error that depends on the values (an index out of range): right destinations.
        d.call = with_destinations(variant, v, s.call, *res, false);
      } else {
        // An error of the arguments: a destination it does not depend on, [0] of the first
        // tensor's dtype.
        const DType dt = first_tensor_dtype(s.call).value_or(DType::Float32);
        for (size_t k = 0; k < v.destinations.size(); ++k) {
          const Argument& a = variant.schema.arguments[v.destinations[k]];
          d.call.kwargs.emplace_back(a.name,
                                     a.type.is_list ? Literal::list({T({0}, dt)}) : T({0}, dt));
        }
      }
    } else if (s.call.args.empty() || s.call.args[0].kind != LitKind::Tensor) {
      continue;
    }
    out.push_back(std::move(d));
    ++errors;
  }
  return out;
}

}  // namespace crucible
