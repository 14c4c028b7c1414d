// Correctness evaluation of one case (runs inside a worker process).
#include "crucible/eval/evaluate.h"
#include "crucible/ops/materialize.h"

#include <chrono>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "crucible/core/map_tensors.h"
#include "ops/random_checks.h"

namespace crucible {

namespace {

std::string first_tensor_dtype(const cases::CallSpec& call) {
  for (const auto& a : call.args) {
    if (a.kind == cases::LitKind::Tensor) return std::string(dtype_code(a.tensor.dtype));
    if (a.kind == cases::LitKind::List || a.kind == cases::LitKind::Tuple)
      for (const auto& item : a.items)
        if (item.kind == cases::LitKind::Tensor) return std::string(dtype_code(item.tensor.dtype));
  }
  return "";
}

// The outcome of running one backend: its outputs, or the error it raised.
struct RunOutcome {
  Values outputs;
  bool raised = false;  // an op error (ATen would raise)
  std::string message;
  Status status = Status::Passed;  // Unsupported, MemoryLimit or Failed for other errors
};

RunOutcome run_backend(Backend& b, const OpDef& op, const Values& args) {
  RunOutcome o;
  try {
    o.outputs = b.run(op, args);
    b.synchronize();
  } catch (const Error& e) {
    o.message = e.what();
    switch (e.kind()) {
      case ErrorKind::OpError:
        o.raised = true;
        break;
      case ErrorKind::Unsupported:
        o.status = Status::Unsupported;
        break;
      case ErrorKind::Memory:
        o.status = Status::MemoryLimit;
        break;
      case ErrorKind::CompileError:
        o.status = Status::CompileError;
        break;
      default:
        o.status = Status::Failed;
        break;
    }
  } catch (const std::bad_alloc&) {
    o.status = Status::MemoryLimit;
    o.message = "allocation failed (std::bad_alloc)";
  } catch (const std::exception& e) {
    o.status = Status::Failed;
    o.message = std::string("threw an unexpected exception: ") + e.what();
  }
  return o;
}

// Whether two storages (of an input and of the candidate's copy of it) hold the same bytes,
// the whole storage: a kernel that writes into the gaps of a strided view, or past its end,
// changed it.
bool same_storage_bytes(const Tensor& a, const Tensor& b) {
  const size_t n = a.storage()->nbytes();
  if (n != b.storage()->nbytes() || a.offset() != b.offset() || a.strides() != b.strides()) {
    // Laid out differently (a device backend's copy back to the host): element by element.
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
    const size_t item = a.itemsize();
    const auto* p = static_cast<const char*>(a.storage()->data());
    const auto* q = static_cast<const char*>(b.storage()->data());
    for (int64_t i = 0; i < a.numel(); ++i)
      if (std::memcmp(p + a.storage_index(i) * static_cast<int64_t>(item),
                      q + b.storage_index(i) * static_cast<int64_t>(item), item) != 0)
        return false;
    return true;
  }
  return n == 0 || std::memcmp(a.storage()->data(), b.storage()->data(), n) == 0;
}

// For a mutated argument: the bytes of its storage that no element of the view covers (the
// gaps of a strided view, what lies before and after it) must stay as they were. Returns the
// number of changed bytes.
int64_t changed_outside_view(const Tensor& before, const Tensor& after) {
  const size_t n = before.storage()->nbytes();
  // A storage the op replaced or resized (an `out=` tensor of another shape): nothing to compare.
  if (n != after.storage()->nbytes() || before.storage() == after.storage()) return 0;
  std::vector<uint8_t> covered(n, 0);
  const size_t item = after.itemsize();
  for (int64_t i = 0; i < after.numel(); ++i) {
    const size_t at = static_cast<size_t>(after.storage_index(i)) * item;
    for (size_t b = 0; b < item && at + b < n; ++b) covered[at + b] = 1;
  }
  const auto* p = static_cast<const uint8_t*>(before.storage()->data());
  const auto* q = static_cast<const uint8_t*>(after.storage()->data());
  int64_t changed = 0;
  for (size_t i = 0; i < n; ++i)
    if (!covered[i] && p[i] != q[i]) ++changed;
  return changed;
}

std::vector<Tensor> tensors_of(const Value& v) {
  std::vector<Tensor> ts;
  if (v.is_tensor() && v.tensor().defined()) ts.push_back(v.tensor());
  if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
    for (const Tensor& t : v.tensors())
      if (t.defined()) ts.push_back(t);
  return ts;
}

Values values_to_host(Backend& b, const Values& vs) {
  if (b.device().is_cpu()) return vs;
  return map_tensors(vs, [&](const Tensor& t) { return b.to_host(t); });
}

bool alias_forbidden(const Argument& ret) { return !ret.alias.has_value(); }

// Whether mutated argument `i` is also a return of the schema (the same alias set).
bool returned_argument(const Schema& s, size_t i) {
  const Argument& a = s.arguments[i];
  for (const Argument& ret : s.returns)
    if (ret.alias && a.alias && ret.alias->before_sets == a.alias->before_sets) return true;
  return false;
}

class Judge {
 public:
  Judge(const OpDef& op, const Values& inputs, const Values& ref_args, const Values& cand_args,
        CaseResult& r)
      : op_(op), inputs_(inputs), ref_args_(ref_args), cand_args_(cand_args), r_(r) {
    scale_ = op.compare.tol_scale ? std::max(1.0, op.compare.tol_scale(inputs)) : 1.0;
  }

  // Records a failure; the detail keeps the first three causes, most basic first.
  void fail(const std::string& reason) {
    if (r_.status == Status::Passed) {
      r_.status = Status::Failed;
      r_.detail = reason;
      causes_ = 1;
    } else if (causes_++ < 3) {
      r_.detail += "; " + reason;
    }
  }

  // `shape_only`: an output whose values are unspecified (ComparePolicy::unspecified_outputs).
  void compare_value(const Value& ref, const Value& cand, const std::string& what,
                     bool shape_only = false) {
    if (ref.is_tensor()) {
      if (!cand.is_tensor())
        return fail(
            fmt::format("{}: expected a tensor, got {}", what, value_kind_name(cand.kind())));
      compare_tensor(ref.tensor(), cand.tensor(), what, shape_only);
    } else if (ref.kind() == ValueKind::TensorList || ref.kind() == ValueKind::OptTensorList) {
      if (cand.kind() != ref.kind()) return fail(what + ": expected a tensor list");
      const auto& rs = ref.tensors();
      const auto& cs = cand.tensors();
      if (rs.size() != cs.size())
        return fail(fmt::format("{}: expected {} tensors, got {}", what, rs.size(), cs.size()));
      for (size_t i = 0; i < rs.size(); ++i) {
        if (rs[i].defined() != cs[i].defined())
          return fail(fmt::format("{}[{}]: defined-ness differs", what, i));
        if (rs[i].defined()) compare_tensor(rs[i], cs[i], fmt::format("{}[{}]", what, i));
      }
    } else if (ref.is_scalar()) {
      if (!cand.is_scalar()) return fail(what + ": expected a number");
      double a = ref.to_double(), b = cand.to_double();
      if (!(a == b || (std::isnan(a) && std::isnan(b)) ||
            std::fabs(a - b) <= 1e-7 * scale_ * (1 + std::fabs(a))))
        fail(fmt::format("{}: expected {}, got {}", what, a, b));
    } else if (ref.kind() != cand.kind()) {
      fail(fmt::format("{}: expected {}, got {}", what, value_kind_name(ref.kind()),
                       value_kind_name(cand.kind())));
    }
  }

  void compare_tensor(const Tensor& ref, const Tensor& cand, const std::string& what,
                      bool shape_only = false) {
    if (!cand.defined()) return fail(what + ": the candidate returned an undefined tensor");
    if (shape_only || op_.compare.kind == ComparePolicy::Kind::ShapeOnly) {
      TensorCheck c;
      c.what = what;
      c.numel = ref.numel();
      if (ref.shape() != cand.shape() || ref.dtype() != cand.dtype() ||
          (ref.numel() > 1 && ref.strides() != cand.strides())) {
        c.passed = false;
        c.reason =
            fmt::format("{}: expected {} with strides {}, got {} with strides {}", what, ref.str(),
                        shape_str(ref.strides()), cand.str(), shape_str(cand.strides()));
      }
      record(std::move(c));
      return;
    }
    record(compare_tensors(ref, cand, scale_, what));
  }

  void record(TensorCheck c) {
    if (!c.passed) fail(c.reason);
    r_.checks.push_back(std::move(c));
  }

  // The structural rules of the schema: mutated arguments are returned, outputs without an
  // alias annotation are fresh, view ops return views, other inputs stay unchanged.
  void check_aliasing(const Values& cand_out) {
    const Schema& s = op_.schema;
    for (size_t k = 0; k < cand_out.size() && k < s.returns.size(); ++k) {
      if (!cand_out[k].is_tensor() || !cand_out[k].tensor().defined()) continue;
      const Tensor& out = cand_out[k].tensor();
      const Argument& ret = s.returns[k];
      if (ret.alias && ret.alias->is_write) {
        // Returns the argument it mutated: find it by alias set.
        for (size_t i = 0; i < s.arguments.size(); ++i) {
          const Argument& a = s.arguments[i];
          if (a.alias && a.alias->is_write && a.alias->before_sets == ret.alias->before_sets &&
              cand_args_[i].is_tensor() && !out.shares_storage(cand_args_[i].tensor()))
            fail(
                fmt::format("output {} must be the mutated argument '{}' itself, but it is a new "
                            "tensor",
                            k, a.name));
        }
      } else if (alias_forbidden(ret) && !op_.compare.output_may_alias && out.numel() > 0) {
        for (size_t i = 0; i < s.arguments.size(); ++i) {
          if (cand_args_[i].is_tensor() && cand_args_[i].tensor().defined() &&
              out.overlaps(cand_args_[i].tensor()))
            fail(fmt::format("output {} aliases input '{}', but the schema says it is a new tensor",
                             k, s.arguments[i].name));
        }
      }
      if (op_.compare.output_is_view && ret.alias && !ret.alias->is_write) {
        bool is_view = false;
        for (const Value& a : cand_args_)
          if (a.is_tensor() && out.shares_storage(a.tensor())) is_view = true;
        if (!is_view)
          fail(fmt::format("output {} must be a view of the input, but it is a copy", k));
      }
    }
    // Every tensor argument (lists included) the op does not mutate is unchanged, its whole
    // storage; a mutated one is unchanged outside the elements of its view.
    auto mutated = s.mutated_arguments();
    for (size_t i = 0; i < s.arguments.size() && i < cand_args_.size(); ++i) {
      const std::vector<Tensor> before = tensors_of(inputs_[i]), after = tensors_of(cand_args_[i]);
      const bool is_mutated = std::find(mutated.begin(), mutated.end(), i) != mutated.end();
      for (size_t j = 0; j < before.size() && j < after.size(); ++j) {
        const std::string name = before.size() > 1 || inputs_[i].kind() != ValueKind::Tensor
                                     ? fmt::format("'{}'[{}]", s.arguments[i].name, j)
                                     : fmt::format("'{}'", s.arguments[i].name);
        if (is_mutated) {
          const int64_t n = changed_outside_view(before[j], after[j]);
          if (n > 0)
            fail(fmt::format(
                "the candidate wrote {} byte(s) of the storage of mutated argument {} outside "
                "the elements of its view (the gaps between strided elements, or before or "
                "after the view)",
                n, name));
        } else if (!same_storage_bytes(before[j], after[j])) {
          fail(
              fmt::format("the candidate wrote into input {}, which the op must not mutate", name));
        }
      }
    }
  }

 private:
  const OpDef& op_;
  const Values& inputs_;
  const Values& ref_args_;
  const Values& cand_args_;
  CaseResult& r_;
  double scale_ = 1;
  int causes_ = 0;
};

CaseResult evaluate(const Case& c, const OpDef& op, const Values* given, Backend& reference,
                    Backend& candidate) {
  auto t0 = std::chrono::steady_clock::now();
  CaseResult r;
  r.case_id = c.id();
  r.op = c.op;
  r.call = cases::print_call(c.call);
  r.label = c.label;
  r.source = c.source;
  r.seed = c.seed;
  r.cnt = c.cnt;
  r.dtype = first_tensor_dtype(c.call);
  auto finish = [&]() -> CaseResult {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };

  // An op the candidate does not have is decided before the inputs are made (real-model
  // calls can take seconds to materialise). A backend that cannot tell yet (a plugin whose
  // library failed to load) says it supports the op and reports at run time.
  std::string why;
  if (!candidate.has_op(op) && !candidate.supports(op, Values{}, &why)) {
    r.status = Status::Unsupported;
    r.detail = why;
    return finish();
  }

  Values inputs;
  try {
    inputs = given ? deep_copy(*given) : materialize(op, c.call, c.seed);
  } catch (const Error& e) {
    r.status = e.kind() == ErrorKind::Memory        ? Status::MemoryLimit
               : e.kind() == ErrorKind::Unsupported ? Status::Unsupported
                                                    : Status::InvalidCase;
    r.detail = r.status == Status::InvalidCase
                   ? std::string("the case does not fit the op: ") + e.what()
                   : std::string(e.what());
    return finish();
  }

  if (!candidate.supports(op, inputs, &why)) {
    r.status = Status::Unsupported;
    r.detail = why;
    return finish();
  }

  Values ref_args = deep_copy(inputs);
  Values cand_args = deep_copy(inputs);
  reference.manual_seed(c.seed);
  candidate.manual_seed(c.seed);
  RunOutcome ref = run_backend(reference, op, ref_args);
  if (!ref.raised && ref.status != Status::Passed) {
    r.status = Status::InvalidCase;
    r.detail = "the reference could not run the case: " + ref.message;
    return finish();
  }
  RunOutcome cand = run_backend(candidate, op, cand_args);
  if (cand.status != Status::Passed) {
    r.status = cand.status;
    r.detail = cand.message;
    return finish();
  }
  if (ref.raised) {
    if (cand.raised) {
      r.expected_error = true;
      r.detail = "raised as the reference does: " + ref.message;
    } else {
      r.status = Status::Failed;
      r.detail = "missing error: the reference raises (" + ref.message +
                 ") but the candidate returned a result";
    }
    return finish();
  }
  if (cand.raised) {
    r.status = Status::Failed;
    r.detail = "unexpected error: the candidate raised: " + cand.message;
    return finish();
  }

  // Device backends: judge host copies (CPU backends return the same tensors). The reference's
  // too: aten:cuda as the reference makes a factory call's (arange's) outputs on its device.
  ref.outputs = values_to_host(reference, ref.outputs);
  ref_args = values_to_host(reference, ref_args);
  cand.outputs = values_to_host(candidate, cand.outputs);
  cand_args = values_to_host(candidate, cand_args);
  Judge judge(op, inputs, ref_args, cand_args, r);
  if (ref.outputs.size() != cand.outputs.size()) {
    judge.fail(fmt::format("expected {} outputs, got {}", ref.outputs.size(), cand.outputs.size()));
    return finish();
  }
  // A mutated argument is compared by value, except one the op returns when the op has its own
  // judge: the judge sees it as an output (sort.values' indices of tied values may differ).
  const bool judged = op.compare.kind == ComparePolicy::Kind::Custom;
  for (size_t i : op.schema.mutated_arguments()) {
    if (judged && returned_argument(op.schema, i)) continue;
    if (i < ref_args.size() && ref_args[i].is_tensor())
      judge.compare_value(ref_args[i], cand_args[i],
                          fmt::format("mutated argument '{}'", op.schema.arguments[i].name));
  }
  if (op.compare.kind == ComparePolicy::Kind::Custom) {
    for (TensorCheck& check : op.compare.custom(inputs, ref.outputs, cand.outputs))
      judge.record(std::move(check));
  } else {
    for (size_t k = 0; k < ref.outputs.size(); ++k)
      judge.compare_value(ref.outputs[k], cand.outputs[k], fmt::format("output {}", k),
                          op.compare.output_unspecified(k, inputs));
  }
  if (op.compare.random) {
    // The same seed must give the same values.
    Values again_args = deep_copy(inputs);
    candidate.manual_seed(c.seed);
    RunOutcome again = run_backend(candidate, op, again_args);
    again.outputs = values_to_host(candidate, again.outputs);
    for (size_t k = 0; k < again.outputs.size() && k < cand.outputs.size(); ++k) {
      if (!again.outputs[k].is_tensor() || !cand.outputs[k].is_tensor()) continue;
      const Tensor a = cand.outputs[k].tensor().contiguous();
      const Tensor b = again.outputs[k].tensor().contiguous();
      if (a.shape() != b.shape() || a.dtype() != b.dtype() ||
          std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * a.itemsize()))
        judge.fail(fmt::format("output {} differs between two runs with the same seed", k));
    }
    if (op.compare.seed_collision_log10) {
      // Another seed must give other bytes: a kernel that ignores the seed fails.
      Values other_args = deep_copy(inputs);
      candidate.manual_seed(random_checks::other_seed(c.seed));
      RunOutcome other = run_backend(candidate, op, other_args);
      if (other.status != Status::Passed || other.raised) {
        judge.fail("the candidate failed under another seed: " + other.message);
      } else if (auto seed_why = random_checks::seed_dependence_failure(
                     op, inputs, ref.outputs, cand.outputs,
                     values_to_host(candidate, other.outputs))) {
        judge.fail(*seed_why);
      }
    }
  }
  judge.check_aliasing(cand.outputs);
  if (r.status == Status::Passed) r.detail = "";
  return finish();
}

}  // namespace

CaseResult evaluate_case(const Case& c, const OpDef& op, Backend& reference, Backend& candidate) {
  return evaluate(c, op, nullptr, reference, candidate);
}

CaseResult evaluate_case_with_inputs(const Case& c, const OpDef& op, const Values& inputs,
                                     Backend& reference, Backend& candidate) {
  return evaluate(c, op, &inputs, reference, candidate);
}

}  // namespace crucible
