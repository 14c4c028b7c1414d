// The op catalog: OpRegistry and the single place that lists every op family.
#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"
#include "ops/quantized_internal.h"
#include "ops/sample_completion.h"
#include "ops/variant_samples.h"

namespace crucible {

ArgRole OpDef::role_of(const std::string& arg_name) const {
  auto it = roles.find(arg_name);
  return it == roles.end() ? ArgRole{} : it->second;
}

Values OpDef::run_ref(const Values& args, uint64_t seed) const {
  if (ref_seeded) return ref_seeded(Args(args, schema), seed);
  return ref(Args(args, schema));
}

Values OpDef::run_meta(const Values& args) const {
  if (!meta) internal_error("catalog: op without a meta function: " + name);
  Values out = meta(Args(args, schema));
  if (out.size() != schema.returns.size())
    internal_error(
        fmt::format("catalog: the meta function of {} returned {} value(s), the schema "
                    "has {} return(s)",
                    name, out.size(), schema.returns.size()));
  return out;
}

Cost OpDef::run_cost(const Values& args, const Values& outputs) const {
  return cost ? cost(Args(args, schema), outputs) : Cost{};
}

OpDef OpDef::from_schema(std::string_view schema_text, std::string family_name) {
  OpDef op;
  op.schema = parse_schema(schema_text);
  op.name = op.schema.op_name();
  op.family = std::move(family_name);
  return op;
}

std::string op_base_name(std::string_view op_name) {
  std::string_view s = op_name;
  if (s.starts_with("aten.")) s.remove_prefix(5);
  if (s.starts_with("aten::")) s.remove_prefix(6);
  // Another namespace ("quantized_decomposed.quantize_per_token.default") goes too.
  if (const auto first = s.find('.');
      first != std::string_view::npos && s.find('.', first + 1) != std::string_view::npos)
    s.remove_prefix(first + 1);
  auto dot = s.find('.');
  return std::string(dot == std::string_view::npos ? s : s.substr(0, dot));
}

void OpRegistry::add(OpDef op) {
  if (op.name.empty()) internal_error("catalog: an op without a name");
  if (ops_.count(op.name)) internal_error("catalog: op registered twice: " + op.name);
  if (!op.ref && !op.ref_seeded)
    internal_error("catalog: op without a reference implementation: " + op.name);
  if (op.compare.kind == ComparePolicy::Kind::Custom && !op.compare.custom)
    internal_error("catalog: op with a custom comparison but no judge: " + op.name);
  if (!op.samples) internal_error("catalog: op without samples: " + op.name);
  if (!op.meta) internal_error("catalog: op without a meta function: " + op.name);
  if (!op.cost) internal_error("catalog: op without a cost model: " + op.name);
  auto owned = std::make_unique<OpDef>(std::move(op));
  const OpDef* p = owned.get();
  ops_.emplace(p->name, std::move(owned));
  ordered_.insert(
      std::upper_bound(ordered_.begin(), ordered_.end(), p,
                       [](const OpDef* a, const OpDef* b) { return a->name < b->name; }),
      p);
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  if (it != ops_.end()) return it->second.get();
  if (!name.starts_with("aten.")) {
    it = ops_.find("aten." + std::string(name));
    if (it != ops_.end()) return it->second.get();
  }
  return nullptr;
}

namespace {
// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}
}  // namespace

const OpDef& OpRegistry::get(std::string_view name) const {
  if (const OpDef* op = find(name)) return *op;
  std::string best;
  size_t best_d = 1000;
  std::string_view bare = name.starts_with("aten.") ? name.substr(5) : name;
  for (const OpDef* op : ordered_) {
    std::string_view full = std::string_view(op->name).substr(5);  // without "aten."
    size_t d = std::min({edit_distance(bare, full), edit_distance(bare, op_base_name(op->name)),
                         edit_distance(bare, full.substr(0, full.find('.')))});
    if (d < best_d) best_d = d, best = op->name;
  }
  std::string msg = "unknown op '" + std::string(name) + "'";
  if (!best.empty() && best_d <= 4) msg += "; did you mean '" + best + "'?";
  msg += " (`crucible ops` lists the catalog)";
  usage_error(msg);
}

std::vector<const OpDef*> OpRegistry::match(const std::vector<std::string>& terms) const {
  std::vector<const OpDef*> out;
  auto push = [&](const OpDef* op) {
    if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
  };
  for (const std::string& raw : terms) {
    std::string term = raw;
    term.erase(0, term.find_first_not_of(" \t"));
    term.erase(term.find_last_not_of(" \t") + 1);
    if (term.empty()) continue;
    if (const OpDef* op = find(term)) {
      push(op);
      continue;
    }
    bool any = false;
    for (const OpDef* op : ordered_) {
      bool base_term = term.find('.', term.starts_with("aten.") ? 5 : 0) == std::string::npos;
      if (base_term && op_base_name(op->name) == op_base_name(term)) {
        push(op);
        any = true;
      }
    }
    if (!any) get(term);  // throws the usage error with a suggestion
  }
  if (out.empty()) usage_error("--ops matched no op");
  return out;
}

const OpRegistry& OpRegistry::catalog() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_pointwise_unary_ops(*r);
    register_pointwise_binary_ops(*r);
    register_copy_ops(*r);
    register_view_ops(*r);
    register_reduction_ops(*r);
    register_matmul_ops(*r);
    register_softmax_ops(*r);
    register_norm_ops(*r);
    register_embedding_ops(*r);
    register_pointwise_math_ops(*r);
    register_activation_ops(*r);
    register_activation_backward_ops(*r);
    register_arithmetic_ops(*r);
    register_comparison_ops(*r);
    register_where_ops(*r);
    register_loss_ops(*r);
    register_statistics_ops(*r);
    register_scan_ops(*r);
    register_sort_ops(*r);
    register_distance_ops(*r);
    register_softmax_backward_ops(*r);
    register_nll_loss_ops(*r);
    register_shape_ops(*r);
    register_join_ops(*r);
    register_slice_scatter_ops(*r);
    register_indexing_ops(*r);
    register_embedding_backward_ops(*r);
    register_creation_ops(*r);
    register_random_ops(*r);
    register_meta_ops(*r);
    register_convolution_ops(*r);
    register_im2col_ops(*r);
    register_pooling_ops(*r);
    register_batch_norm_ops(*r);
    register_group_norm_ops(*r);
    register_upsample_ops(*r);
    register_grid_sampler_ops(*r);
    register_padding_ops(*r);
    register_fft_ops(*r);
    register_bn_functional_ops(*r);
    register_creation_permuted_ops(*r);
    register_detach_ops(*r);
    register_attention_ops(*r);
    register_attention_cuda_ops(*r);
    register_quantized_ops(*r);
    for (auto& [name, op] : r->ops_) complete_samples(*op);
    // The in-place and out= overloads ATen has for these ops, derived from them.
    register_derived_variants(*r);
    return r;
  }();
  return *registry;
}

}  // namespace crucible
