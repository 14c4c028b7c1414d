// The recipe as a graph rewrite: the graph printed, each linear layer's statement replaced by
// the recipe's statements, the quantized weights declared as parameters, and the text parsed
// again (so every new node is checked by its op's meta function, and the rest of the graph by
// its annotations: a rewrite that changed a layer's output is refused there).
#include "crucible/quant/rewrite.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/cases/references.h"
#include "crucible/core/error.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/ops/op.h"
#include "quant/weights.h"

namespace crucible::quant {
namespace {

using graph::Graph;

std::string ref_name(const cases::Literal& lit) {
  if (!cases::is_value_ref(lit)) return "";
  return lit.text.substr(1);
}

bool is_param(const Graph& g, const std::string& name) {
  const graph::Declaration* d = g.find_decl(name);
  return d && d->kind == graph::DeclKind::Param;
}

// The parameter a weight operand reads, and whether it is stored [K, N] (true) or [N, K].
bool resolve_weight(const Graph& g, const std::string& operand, std::string* param, bool* kn) {
  if (operand.empty()) return false;
  if (is_param(g, operand)) {
    *param = operand;
    *kn = true;  // used as mat2 [K, N] directly
    return true;
  }
  const graph::ValueDef& def = g.value(operand);
  if (def.node < 0) return false;
  const graph::Node& n = g.nodes[def.node];
  const bool transpose = n.op == "aten.t.default" ||
                         (n.op == "aten.permute.default" && n.call.args.size() == 2 &&
                          n.call.args[1].items.size() == 2 && n.call.args[1].items[0].i == 1 &&
                          n.call.args[1].items[1].i == 0);
  if (!transpose || n.call.args.empty()) return false;
  const std::string src = ref_name(n.call.args[0]);
  if (!is_param(g, src)) return false;
  *param = src;
  *kn = false;
  return true;
}

bool default_scalars(const graph::Node& n) {
  for (const auto& [key, v] : n.call.kwargs) {
    const double x = v.kind == cases::LitKind::Int ? static_cast<double>(v.i) : v.f;
    if ((key == "beta" || key == "alpha") && x == 1.0) continue;
    return false;
  }
  return true;
}

}  // namespace

std::vector<LinearSite> find_linear_layers(const Graph& g) {
  std::vector<LinearSite> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (n.outputs.size() != 1) continue;
    LinearSite s;
    s.node = i;
    s.out = n.outputs[0];
    std::string w;
    if (n.op == "aten.addmm.default" && n.call.args.size() == 3 && default_scalars(n)) {
      s.bias = ref_name(n.call.args[0]);
      s.x = ref_name(n.call.args[1]);
      w = ref_name(n.call.args[2]);
      if (s.bias.empty()) continue;
      if (g.value(s.bias).spec.shape.size() != 1) continue;  // a bias per output column only
    } else if (n.op == "aten.mm.default" && n.call.args.size() == 2 && n.call.kwargs.empty()) {
      s.x = ref_name(n.call.args[0]);
      w = ref_name(n.call.args[1]);
    } else {
      continue;
    }
    if (s.x.empty()) continue;
    if (s.weight.empty() && !resolve_weight(g, w, &s.weight, &s.weight_is_kn)) continue;
    const graph::TensorSpec& ws = g.value(s.weight).spec;
    const graph::TensorSpec& xs = g.value(s.x).spec;
    if (ws.shape.size() != 2 || xs.shape.size() != 2 || !is_floating(xs.dtype)) continue;
    if (ws.dtype != xs.dtype) continue;
    s.n = s.weight_is_kn ? ws.shape[1] : ws.shape[0];
    s.k = s.weight_is_kn ? ws.shape[0] : ws.shape[1];
    out.push_back(s);
  }
  return out;
}

namespace {

struct Emitter {
  const Graph& g;
  const Recipe& r;
  graph::TensorMap& weights;
  std::vector<std::string> decls;  // new parameter declarations
  std::set<std::string> declared;

  void param(const std::string& name, const Tensor& t) {
    if (!declared.insert(name).second) return;
    decls.push_back(fmt::format("param %{} : {} zeros", name, graph::TensorSpec::of(t).str()));
    weights[name] = t;
  }

  // The statements replacing one layer.
  std::vector<std::string> layer(const LinearSite& s) {
    const DType xd = g.value(s.x).spec.dtype;
    const std::string where = fmt::format("{}:{}", g.file, g.nodes[s.node].line);
    Tensor w = weights.at(s.weight);
    if (s.weight_is_kn) w = w.transpose(0, 1);
    w = w.contiguous();
    const std::string o = s.out, W = s.weight;
    std::vector<std::string> lines;
    std::string x = s.x;
    if (!g.value(s.x).spec.contiguous()) {
      lines.push_back(fmt::format(
          "%{}__x = aten.clone.default(%{}, memory_format=torch.contiguous_format)", o, x));
      x = o + "__x";
    }
    std::string p = o + "__p";
    DType pd = xd;  // the product's dtype
    switch (r.kind) {
      case RecipeKind::None:
        internal_error("recipe none rewrites nothing");
      case RecipeKind::Int8WeightOnly: {
        const Int8Weight q = quantize_int8_per_channel(w, xd);
        param(W + ".int8", q.q);
        param(W + ".int8_scale", q.scale);
        lines.push_back(fmt::format(
            "%{} = aten._weight_int8pack_mm.default(%{}, %{}.int8, %{}.int8_scale)", p, x, W, W));
        break;
      }
      case RecipeKind::Int8Dynamic: {
        const DType sd = xd == DType::Float16 ? DType::Float32 : xd;
        const Int8Weight q = quantize_int8_per_channel(w, sd);
        param(W + ".int8", q.q);
        param(W + ".int8_scale_" + dtype_code_str(sd), q.scale);
        lines.push_back(
            fmt::format("%{0}__aq_s, %{0}__aq_z = "
                        "quantized_decomposed.choose_qparams_per_token.default(%{1}, i8)",
                        o, x));
        lines.push_back(
            fmt::format("%{0}__aq_xq = quantized_decomposed.quantize_per_token.default(%{1}, "
                        "%{0}__aq_s, %{0}__aq_z, -128, 127, i8)",
                        o, x));
        lines.push_back(fmt::format("%{0}__wt = aten.permute.default(%{1}.int8, [1, 0])", o, W));
        lines.push_back(fmt::format("%{0}__acc = aten._int_mm.default(%{0}__aq_xq, %{0}__wt)", o));
        lines.push_back(fmt::format("%{0}__y = aten.mul.Tensor(%{0}__acc, %{0}__aq_s)", o));
        lines.push_back(fmt::format("%{} = aten.mul.Tensor(%{}__y, %{}.int8_scale_{})", p, o, W,
                                    dtype_code_str(sd)));
        pd = sd;
        break;
      }
      case RecipeKind::Int4WeightOnly: {
        if (s.k % r.group != 0)
          input_error(where, fmt::format("layer %{} (N={}, K={}): {} needs K to be a multiple of "
                                         "the group size {}; use a group size that divides {}",
                                         o, s.n, s.k, r.name, r.group, s.k));
        if (s.n % 16 != 0)
          input_error(
              where,
              fmt::format("layer %{} (N={}, K={}): {} needs N to be a multiple of 16 (ATen's int4 "
                          "CPU packing); use int8wo or uintx-4-{} for this layer's model",
                          o, s.n, s.k, r.name, r.group));
        const Int4Weight q = quantize_int4_groups(w, r.group, xd);
        const OpDef& pack =
            OpRegistry::catalog().get("aten._convert_weight_to_int4pack_for_cpu.default");
        const Tensor packed = pack.run_ref({Value(q.values), Value(int64_t{2})}).at(0).tensor();
        const std::string pn = fmt::format("{}.int4_g{}", W, r.group);
        param(pn, packed);
        param(pn + "_scale_zero_" + dtype_code_str(xd), q.scale_and_zero);
        lines.push_back(fmt::format(
            "%{} = aten._weight_int4pack_mm_for_cpu.default(%{}, %{}, {}, %{}_scale_zero_{})", p, x,
            pn, r.group, pn, dtype_code_str(xd)));
        break;
      }
      case RecipeKind::Float8WeightOnly: {
        const Float8Weight q = quantize_float8(w, true, DType::Float32);
        param(W + ".fp8", q.q);
        param(W + ".fp8_scale", q.scale);
        lines.push_back(fmt::format(
            "%{0}__w = torchao.dequantize_affine_float8_non_decomposed.default(%{1}.fp8, "
            "%{1}.fp8_scale, {2})",
            o, W, dtype_code_str(xd)));
        lines.push_back(fmt::format("%{0}__wt = aten.permute.default(%{0}__w, [1, 0])", o));
        lines.push_back(fmt::format("%{} = aten.mm.default(%{}, %{}__wt)", p, x, o));
        break;
      }
      case RecipeKind::Float8DynamicTensor:
      case RecipeKind::Float8DynamicRow: {
        const bool row = r.kind == RecipeKind::Float8DynamicRow;
        const Float8Weight q = quantize_float8(w, row, DType::Float32);
        const std::string wn = W + (row ? ".fp8_row" : ".fp8_tensor");
        // _scaled_mm's mat2 is W^T [K, N] (column-major, as ATen wants it) and a row-wise
        // scale_b is [1, N].
        param(wn, q.q.transpose(0, 1));
        param(wn + "_scale", row ? q.scale.view({1, s.n}) : q.scale);
        lines.push_back(fmt::format("%{0}__aq_a = aten.abs.default(%{1})", o, x));
        lines.push_back(
            row ? fmt::format("%{0}__aq_m = aten.amax.default(%{0}__aq_a, [-1], True)", o)
                : fmt::format("%{0}__aq_m = aten.amax.default(%{0}__aq_a)", o));
        lines.push_back(fmt::format("%{0}__aq_mc = aten.clamp.default(%{0}__aq_m, 1e-12)", o));
        lines.push_back(fmt::format("%{0}__aq_s = aten.div.Tensor(%{0}__aq_mc, 448.0)", o));
        std::string s32 = o + "__aq_s";
        if (xd != DType::Float32) {
          lines.push_back(
              fmt::format("%{0}__aq_s32 = aten._to_copy.default(%{0}__aq_s, dtype=f32)", o));
          s32 = o + "__aq_s32";
        }
        lines.push_back(
            fmt::format("%{0}__aq_x8 = torchao.quantize_affine_float8_non_decomposed.default(%{1}, "
                        "%{2}, f8e4m3fn)",
                        o, x, s32));
        lines.push_back(fmt::format(
            "%{0} = aten._scaled_mm.default(%{1}__aq_x8, %{2}, %{3}, %{2}_scale, None, None, {4})",
            p, o, wn, s32, dtype_code_str(xd)));
        break;
      }
      case RecipeKind::UIntX: {
        if (s.k % r.group != 0)
          input_error(where, fmt::format("layer %{} (N={}, K={}): {} needs K to be a multiple of "
                                         "the group size {}; use a group size that divides {}",
                                         o, s.n, s.k, r.name, r.group, s.k));
        const UIntXWeight q = quantize_uintx_groups(w, r.bits, r.group);
        const std::string wn = fmt::format("{}.uint{}_g{}", W, r.bits, r.group);
        param(wn, q.q);
        param(wn + "_scale", q.scale);
        param(wn + "_zero", q.zero);
        lines.push_back(
            fmt::format("%{0}__w = quantized_decomposed.dequantize_per_channel_group.default(%{1}, "
                        "%{1}_scale, %{1}_zero, 0, {2}, u8, {3}, {4})",
                        o, wn, (1 << r.bits) - 1, r.group, dtype_code_str(xd)));
        lines.push_back(fmt::format("%{0}__wt = aten.permute.default(%{0}__w, [1, 0])", o));
        lines.push_back(fmt::format("%{} = aten.mm.default(%{}, %{}__wt)", p, x, o));
        break;
      }
    }
    if (pd != xd) {
      lines.push_back(fmt::format("%{0}__c = aten._to_copy.default(%{1}, dtype={2})", o, p,
                                  dtype_code_str(xd)));
      p = o + "__c";
    }
    if (!s.bias.empty())
      lines.push_back(fmt::format("%{} = aten.add.Tensor(%{}, %{})", o, p, s.bias));
    else
      lines.back().replace(0, lines.back().find(" = "), "%" + o);
    return lines;
  }
};

}  // namespace

QuantizedGraph apply_recipe(const Recipe& recipe, const Graph& g, const graph::TensorMap& params) {
  QuantizedGraph out;
  out.weights = params;
  if (recipe.kind == RecipeKind::None) {
    out.graph = g;
    return out;
  }
  const std::vector<LinearSite> sites = find_linear_layers(g);
  Emitter e{g, recipe, out.weights, {}, {}};
  std::map<std::string, std::vector<std::string>> replaced;  // printed node -> new statements
  for (const LinearSite& s : sites) replaced[graph::print_node(g, s.node)] = e.layer(s);
  std::istringstream in(graph::print_graph(g));
  std::ostringstream text;
  std::string line;
  bool decls_written = false;
  while (std::getline(in, line)) {
    const bool is_node = line.starts_with("%");
    if (is_node && !decls_written) {
      for (const std::string& d : e.decls) text << d << "\n";
      decls_written = true;
    }
    auto it = is_node ? replaced.find(line) : replaced.end();
    if (it != replaced.end()) {
      for (const std::string& l : it->second) text << l << "\n";
    } else {
      text << line << "\n";
    }
  }
  out.graph = graph::parse_graph(text.str(), g.file + " (" + recipe.name + ")");
  out.graph.file = g.file;
  out.layers = static_cast<int>(sites.size());
  return out;
}

}  // namespace crucible::quant
