// Output plans: what a kernel of the C ABI gets as its outputs.
#include "backends/plugin/output_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace {

void sig_tensor(std::string& s, const Tensor& t) {
  if (!t.defined()) {
    s += "U";
    return;
  }
  s += fmt::format("T{}{}{}", dtype_code(t.dtype()), shape_str(t.shape()), shape_str(t.strides()));
}

// A layout crucible can allocate for a fresh output: the reference's strides when they are
// non-negative and dense (no gaps, no overlap), else contiguous.
Shape output_strides(const Tensor& t) {
  const Shape& st = t.strides();
  int64_t extent = 1;
  for (size_t d = 0; d < st.size(); ++d) {
    if (st[d] < 0 || (st[d] == 0 && t.shape()[d] > 1)) return contiguous_strides(t.shape());
    extent += (t.shape()[d] - 1) * st[d];
  }
  if (t.numel() > 0 && extent != t.numel()) return contiguous_strides(t.shape());
  return st;
}

TensorSpec spec_of(const Tensor& t) { return {t.shape(), output_strides(t), t.dtype()}; }

// The stand-in for an output when the reference raised: shaped like the first tensor argument.
TensorSpec fallback_spec(const Values& args) {
  for (const Value& v : args)
    if (v.is_tensor() && v.tensor().defined())
      return {v.tensor().shape(), contiguous_strides(v.tensor().shape()), v.tensor().dtype()};
  return {{}, {}, DType::Float32};
}

}  // namespace

std::string argument_signature(const OpDef& op, const Values& args) {
  std::string s = op.name;
  for (const Value& v : args) {
    s += '|';
    if (v.is_tensor()) {
      sig_tensor(s, v.tensor());
    } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
      s += '[';
      for (const Tensor& t : v.tensors()) {
        sig_tensor(s, t);
        s += ',';
      }
      s += ']';
    } else {
      s += value_kind_name(v.kind());
      s += ':';
      s += v.debug_str();
    }
  }
  return s;
}

const OutputPlan& OutputPlanner::plan(const OpDef& op, const Values& args) {
  std::string key = argument_signature(op, args);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (cache_.size() > 4096) cache_.clear();

  const Schema& s = op.schema;
  const bool data_dependent = op.data_dependent;
  bool needs_meta = false;
  for (const Argument& ret : s.returns) {
    const bool write = ret.alias && ret.alias->is_write;
    if (write) continue;
    if (ret.type.base == BaseType::Tensor && !ret.type.is_list && data_dependent) continue;
    if (ret.type.base == BaseType::Int || ret.type.base == BaseType::SymInt ||
        ret.type.base == BaseType::Float || ret.type.base == BaseType::Bool)
      continue;
    needs_meta = true;
  }

  OutputPlan plan;
  Values meta_out;
  if (needs_meta) {
    try {
      // The meta layer describes the outputs without computing anything.
      meta_out = op.run_meta(args);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::OpError) throw;
      plan.meta_raised = true;
    }
  }

  for (size_t k = 0; k < s.returns.size(); ++k) {
    const Argument& ret = s.returns[k];
    OutputSlot slot;
    const bool write = ret.alias && ret.alias->is_write;
    const BaseType b = ret.type.base;
    if (write) {
      slot.kind = OutputSlot::Kind::Mutated;
      bool found = false;
      for (size_t i = 0; i < s.arguments.size() && !found; ++i) {
        const Argument& a = s.arguments[i];
        if (a.alias && a.alias->is_write && a.alias->before_sets == ret.alias->before_sets) {
          slot.arg = i;
          found = true;
        }
      }
      if (!found)
        unsupported(
            fmt::format("{}: return {} is written through but matches no argument (the "
                        "kernel ABI cannot pass it)",
                        op.name, k));
    } else if (b == BaseType::Int || b == BaseType::SymInt || b == BaseType::Float ||
               b == BaseType::Bool || b == BaseType::Scalar) {
      if (ret.type.is_list)
        unsupported(op.name + ": list-of-number returns are not passed by the kernel ABI");
      slot.kind = OutputSlot::Kind::Number;
      slot.number_kind = b == BaseType::Float  ? ValueKind::Float
                         : b == BaseType::Bool ? ValueKind::Bool
                                               : ValueKind::Int;
      if (b == BaseType::Scalar && k < meta_out.size() && meta_out[k].is_scalar())
        slot.number_kind = meta_out[k].kind();
    } else if (b == BaseType::Tensor && !ret.type.is_list) {
      const bool view = ret.alias.has_value();
      if (data_dependent && !view) {
        slot.kind = OutputSlot::Kind::DataDependent;
      } else {
        slot.kind = view ? OutputSlot::Kind::View : OutputSlot::Kind::Fresh;
        if (plan.meta_raised || k >= meta_out.size() || !meta_out[k].is_tensor() ||
            !meta_out[k].tensor().defined())
          slot.spec = fallback_spec(args);
        else
          slot.spec = spec_of(meta_out[k].tensor());
      }
    } else if (b == BaseType::Tensor && ret.type.is_list) {
      slot.kind = OutputSlot::Kind::FreshList;
      if (!plan.meta_raised && k < meta_out.size() &&
          (meta_out[k].kind() == ValueKind::TensorList ||
           meta_out[k].kind() == ValueKind::OptTensorList))
        for (const Tensor& t : meta_out[k].tensors())
          slot.items.push_back(t.defined() ? spec_of(t) : fallback_spec(args));
    } else {
      unsupported(fmt::format("{}: return type {} is not passed by the kernel ABI", op.name,
                              ret.type.str()));
    }
    plan.slots.push_back(std::move(slot));
  }
  return cache_[key] = std::move(plan);
}

}  // namespace crucible
