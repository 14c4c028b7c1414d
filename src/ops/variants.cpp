// In-place and out= overloads derived from their functional op (include/crucible/ops/variants.h):
// the destination rules and the derivation of each overload's catalog entry.
#include "crucible/ops/variants.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "crucible/core/dispatch.h"
#include "crucible/core/dtype.h"
#include "crucible/core/error.h"
#include "ops/families.h"
#include "ops/variant_samples.h"

namespace crucible {

namespace {

struct Entry {
  const char* schema;
  const char* functional;
  WriteRule rule;
};

constexpr Entry kEntries[] = {
#include "ops/variant_schemas.inc"
};

std::map<std::string, DerivedVariant, std::less<>>& table() {
  static std::map<std::string, DerivedVariant, std::less<>> t;
  return t;
}

// An argument without its alias annotation, to compare a variant's argument with the
// functional op's.
Argument plain(Argument a) {
  a.alias.reset();
  return a;
}

bool is_destination(const Schema& variant, size_t i) {
  const Argument& a = variant.arguments[i];
  return a.is_mutable() && (a.kwarg_only || !variant.is_out());
}

void flatten(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.tensor());
  } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
    for (const Tensor& t : v.tensors()) out.push_back(t);
  }
}

bool internally_overlapping(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  return false;
}

}  // namespace

bool is_tensor_option(std::string_view name) {
  return name == "dtype" || name == "layout" || name == "device" || name == "pin_memory";
}

const DerivedVariant* derived_variant(std::string_view op_name) {
  auto it = table().find(op_name);
  return it == table().end() ? nullptr : &it->second;
}

const std::vector<std::pair<std::string, std::string>>& variants_not_derived() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"aten.as_strided_.default", "an in-place view op: it restrides self"},
      {"aten.t_.default", "an in-place view op: it restrides self"},
      {"aten.transpose_.default", "an in-place view op: it restrides self"},
      {"aten.squeeze_.default", "an in-place view op: it restrides self"},
      {"aten.squeeze_.dim", "an in-place view op: it restrides self"},
      {"aten.squeeze_.dims", "an in-place view op: it restrides self"},
      {"aten.nonzero.out",
       "a data-dependent shape: ATen resizes out to the result, which crucible does not model"},
      {"aten.native_batch_norm.out",
       "ATen's schema does not mark running_mean and running_var as written, although the kernel "
       "updates them in training as the functional op (whose schema does) does"},
      {"aten._sparse_coo_tensor_with_dims_and_tensors.out",
       "a sparse result: crucible's tensors are strided"},
  };
  return list;
}

std::optional<FunctionalMatch> functional_counterpart(const Schema& variant,
                                                      const OpRegistry& registry) {
  const bool out = variant.is_out();
  const bool inplace = !out && variant.is_inplace();
  if (!out && !inplace) return std::nullopt;
  std::string base = variant.name;
  if (inplace) base.pop_back();
  std::vector<Argument> want;
  for (size_t i = 0; i < variant.arguments.size(); ++i)
    if (!out || !is_destination(variant, i)) want.push_back(plain(variant.arguments[i]));
  for (const OpDef* f : registry.all()) {
    if (f->schema.name != base || f->schema.is_out() || f->schema.name.ends_with('_')) continue;
    std::vector<Argument> all, without_options;
    for (const Argument& a : f->schema.arguments) {
      all.push_back(plain(a));
      if (!(a.kwarg_only && is_tensor_option(a.name))) without_options.push_back(plain(a));
    }
    // The keyword-only marker is part of an argument here: a variant that adds out= after
    // positional-only arguments makes them no less positional.
    auto same = [](const std::vector<Argument>& a, const std::vector<Argument>& b) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i]) || a[i].kwarg_only != b[i].kwarg_only) return false;
      return true;
    };
    if (same(all, want)) return FunctionalMatch{f->name, false};
    if (out && same(without_options, want)) return FunctionalMatch{f->name, true};
  }
  return std::nullopt;
}

Values functional_arguments(const DerivedVariant& v, const Values& args) {
  const Schema& fs = v.functional->schema;
  Values f;
  f.reserve(fs.arguments.size());
  for (size_t k = 0; k < fs.arguments.size(); ++k) {
    const int j = v.functional_arg[k];
    if (j >= 0) {
      f.push_back(args.at(static_cast<size_t>(j)));
    } else if (fs.arguments[k].name == "dtype") {
      const Value& dest = args.at(v.destinations.at(0));
      f.push_back(dest.is_tensor() ? Value(dest.tensor().dtype()) : Value());
    } else {
      f.push_back(fs.arguments[k].default_value.value_or(Value()));
    }
  }
  return f;
}

Values check_destinations(const OpDef& variant, const DerivedVariant& v, const Values& args,
                          const Values& results) {
  std::vector<Tensor> dests, res;
  for (size_t d : v.destinations) flatten(args.at(d), dests);
  for (const Value& r : results) flatten(r, res);
  if (dests.size() != res.size())
    op_error(fmt::format("{}_out() expected an out= argument of size {}, got size {}",
                         variant.schema.name, res.size(), dests.size()));
  for (size_t i = 0; i < dests.size(); ++i) {
    const Tensor& d = dests[i];
    const Tensor& r = res[i];
    CRUCIBLE_CHECK(!internally_overlapping(d),
                   "unsupported operation: more than one element of the written-to tensor refers "
                   "to a single memory location. Please clone() the tensor before performing the "
                   "operation.");
    if (d.shape() != r.shape()) {
      if (!v.inplace)
        unsupported(fmt::format(
            "{}: ATen would resize out= argument {} from {} to the result's shape {}; crucible "
            "does not model resizing (give it the result's shape)",
            variant.name, i, shape_str(d.shape()), shape_str(r.shape())));
      if (v.rule == WriteRule::Cast)
        op_error("output with shape " + shape_str(d.shape()) +
                 " doesn't match the broadcast shape " + shape_str(r.shape()));
      op_error("Bad in-place call: input tensor size " + shape_str(d.shape()) +
               " and output tensor size " + shape_str(r.shape()) + " should match");
    }
    if (v.rule == WriteRule::Same && r.dtype() != d.dtype())
      op_error("Found dtype " + scalar_type_name(d.dtype()) + " but expected " +
               scalar_type_name(r.dtype()));
    if (v.rule == WriteRule::Cast && !can_cast(r.dtype(), d.dtype()))
      op_error("result type " + scalar_type_name(r.dtype()) +
               " can't be cast to the desired output type " + scalar_type_name(d.dtype()));
  }
  Values out;
  out.reserve(variant.schema.returns.size());
  for (size_t k = 0; k < variant.schema.returns.size(); ++k)
    out.push_back(args.at(v.destinations.at(k)));
  return out;
}

Values write_destinations(const OpDef& variant, const DerivedVariant& v, const Values& args,
                          const Values& results) {
  Values out = check_destinations(variant, v, args, results);
  std::vector<Tensor> dests, res;
  for (size_t d : v.destinations) flatten(args.at(d), dests);
  for (const Value& r : results) flatten(r, res);
  for (size_t i = 0; i < dests.size(); ++i) dests[i].copy_from(res[i]);
  return out;
}

namespace {

// The catalog entry of one derived overload.
OpDef derive(const Entry& e, const OpDef& f, DerivedVariant& v) {
  OpDef op;
  op.schema = parse_schema(e.schema);
  op.name = op.schema.op_name();
  op.family = f.family;
  op.dtypes = f.dtypes;
  op.roles = f.roles;
  op.data_dependent = f.data_dependent;
  op.value_checks = f.value_checks;
  v.functional = &f;
  v.inplace = !op.schema.is_out();
  v.rule = e.rule;
  for (const Argument& a : f.schema.arguments) {
    const int j = op.schema.find_argument(a.name);
    if (j < 0 && !(e.rule == WriteRule::Factory && is_tensor_option(a.name)))
      internal_error("catalog: " + op.name + " lacks argument '" + a.name + "' of " + f.name);
    v.functional_arg.push_back(j);
  }
  for (size_t i = 0; i < op.schema.arguments.size(); ++i)
    if (is_destination(op.schema, i)) v.destinations.push_back(i);
  const size_t want = v.inplace ? 1 : f.schema.returns.size();
  if (v.destinations.size() != want ||
      (!op.schema.returns.empty() && op.schema.returns.size() != want))
    internal_error(fmt::format("catalog: {} has {} destination(s) for {} result(s) of {}", op.name,
                               v.destinations.size(), want, f.name));

  // The closures find the entry in the catalog when called (never while it is being built).
  const DerivedVariant* pv = &v;
  const std::string name = op.name;
  auto self = [name]() -> const OpDef& { return OpRegistry::catalog().get(name); };
  op.meta = [pv, self](const Values& args) {
    const Values results = pv->functional->run_meta(functional_arguments(*pv, args));
    return check_destinations(self(), *pv, args, results);
  };
  // As ATen's structured kernels: the arguments and destinations are checked (the meta function)
  // before anything is computed, so a call the meta function refuses is refused the same way
  // whatever the values; data-dependent results are checked once known.
  auto checked = [pv, self](const Values& args, const Values& fargs) {
    if (!pv->functional->data_dependent)
      check_destinations(self(), *pv, args, pv->functional->run_meta(fargs));
  };
  if (f.ref_seeded) {
    op.ref_seeded = [pv, self, checked](const Values& args, uint64_t seed) {
      const Values fargs = functional_arguments(*pv, args);
      checked(args, fargs);
      return write_destinations(self(), *pv, args, pv->functional->run_ref(fargs, seed));
    };
  } else {
    op.ref = [pv, self, checked](const Values& args) {
      const Values fargs = functional_arguments(*pv, args);
      checked(args, fargs);
      return write_destinations(self(), *pv, args, pv->functional->run_ref(fargs));
    };
  }
  op.cost = [pv](const Values& args, const Values&) {
    Values dests;
    for (size_t d : pv->destinations) dests.push_back(args.at(d));
    return pv->functional->run_cost(functional_arguments(*pv, args), dests);
  };
  op.compare = f.compare;
  if (f.compare.tol_scale)
    op.compare.tol_scale = [pv](const Values& args) {
      return pv->functional->compare.tol_scale(functional_arguments(*pv, args));
    };
  if (f.compare.custom)
    op.compare.custom = [pv](const Values& in, const Values& ref, const Values& cand) {
      return pv->functional->compare.custom(functional_arguments(*pv, in), ref, cand);
    };
  if (f.compare.unspecified_where)
    op.compare.unspecified_where = [pv](const Values& in, size_t index) {
      return pv->functional->compare.unspecified_where(functional_arguments(*pv, in), index);
    };
  if (f.compare.seed_collision_log10)
    op.compare.seed_collision_log10 = [pv](const Values& in, const Values& ref) {
      return pv->functional->compare.seed_collision_log10(functional_arguments(*pv, in), ref);
    };
  op.samples = [pv, name](const SampleContext& ctx) {
    return variant_samples(OpRegistry::catalog().get(name), *pv, ctx);
  };
  return op;
}

}  // namespace

void register_derived_variants(OpRegistry& r) {
  for (const Entry& e : kEntries) {
    const OpDef* f = r.find(e.functional);
    if (!f)
      internal_error(std::string("catalog: variant_schemas.inc names ") + e.functional +
                     ", which is not in the catalog (regenerate it)");
    DerivedVariant& v = table()[parse_schema(e.schema).op_name()];
    OpDef op = derive(e, *f, v);
    if (r.find(op.name)) internal_error("catalog: " + op.name + " is written by hand and derived");
    r.add(std::move(op));
  }
}

}  // namespace crucible
