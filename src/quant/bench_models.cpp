// The model types of the micro-benchmark, written as graph text and parsed (so every node is
// checked by its op's meta function).
#include "quant/bench_models.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/graph/parse.h"

namespace crucible::quant {
namespace {

std::string act_line(const std::string& act, const std::string& out, const std::string& in) {
  if (act == "relu") return fmt::format("%{} = aten.relu.default(%{})", out, in);
  if (act == "sigmoid") return fmt::format("%{} = aten.sigmoid.default(%{})", out, in);
  if (act == "gelu") return fmt::format("%{} = aten.gelu.default(%{})", out, in);
  if (act == "silu") return fmt::format("%{} = aten.silu.default(%{})", out, in);
  if (act == "leakyrelu") return fmt::format("%{} = aten.leaky_relu.default(%{})", out, in);
  if (act == "relu6") return fmt::format("%{} = aten.hardtanh.default(%{}, 0.0, 6.0)", out, in);
  if (act == "hardswish") return fmt::format("%{} = aten.hardswish.default(%{})", out, in);
  internal_error("unknown activation " + act);
}

// A linear layer without bias: %out = %in @ %w^T, w [n, k] initialised as nn.Linear does.
std::string linear(const std::string& w, int64_t k, int64_t n, const std::string& dt,
                   const std::string& in, const std::string& out, std::string* decls) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(k));
  *decls +=
      fmt::format("param %{} : T([{}, {}], {}) uniform({}, {})\n", w, n, k, dt, -bound, bound);
  return fmt::format(
      "%{0}_t = aten.permute.default(%{0}, [1, 0])\n%{1} = aten.mm.default(%{2}, %{0}_t)\n", w, out,
      in);
}

}  // namespace

graph::Graph bench_model(const std::string& model_type, const MatrixShape& s, DType dtype) {
  const std::string dt(dtype_code(dtype));
  std::string decls = fmt::format("input %x : T([{}, {}], {}) normal(0, 1)\n", s.m, s.k, dt);
  std::string body, out;
  if (model_type == "linear") {
    body = linear("fc.weight", s.k, s.n, dt, "x", "y", &decls);
    out = "y";
  } else if (model_type.starts_with("ln_linear_")) {
    decls +=
        fmt::format("param %ln.weight : T([{}], {}) ones\nparam %ln.bias : T([{}], {}) zeros\n",
                    s.k, dt, s.k, dt);
    body = fmt::format(
        "%h, %_, %_ = aten.native_layer_norm.default(%x, [{}], %ln.weight, %ln.bias, 1e-05)\n",
        s.k);
    body += linear("fc.weight", s.k, s.n, dt, "h", "z", &decls);
    body += act_line(model_type.substr(10), "y", "z") + "\n";
    out = "y";
  } else if (model_type == "transformer_block") {
    const int64_t k = s.k, m = s.m, heads = k / 64;
    for (const char* ln : {"ln1", "ln2"})
      decls += fmt::format(
          "param %{0}.weight : T([{1}], {2}) ones\nparam %{0}.bias : T([{1}], {2}) zeros\n", ln, k,
          dt);
    body = fmt::format(
        "%h1, %_, %_ = aten.native_layer_norm.default(%x, [{}], %ln1.weight, %ln1.bias, 1e-05)\n",
        k);
    body += linear("attn.qkv.weight", k, 3 * k, dt, "h1", "qkv", &decls);
    body += fmt::format("%qkv5 = aten.view.default(%qkv, [1, {}, 3, {}, 64])\n", m, heads);
    body += "%qkvp = aten.permute.default(%qkv5, [2, 0, 3, 1, 4])\n";
    body +=
        "%q = aten.select.int(%qkvp, 0, 0)\n%k = aten.select.int(%qkvp, 0, 1)\n%v = "
        "aten.select.int(%qkvp, 0, 2)\n";
    body +=
        "%att, %_ = aten._scaled_dot_product_flash_attention_for_cpu.default(%q, %k, %v, 0.0, "
        "True)\n";
    body += "%attp = aten.permute.default(%att, [0, 2, 1, 3])\n";
    body += "%attc = aten.clone.default(%attp, memory_format=torch.contiguous_format)\n";
    body += fmt::format("%att2 = aten.view.default(%attc, [{}, {}])\n", m, k);
    body += linear("attn.proj.weight", k, k, dt, "att2", "proj", &decls);
    body += "%r1 = aten.add.Tensor(%x, %proj)\n";
    body += fmt::format(
        "%h2, %_, %_ = aten.native_layer_norm.default(%r1, [{}], %ln2.weight, %ln2.bias, 1e-05)\n",
        k);
    body += linear("mlp.fc1.weight", k, 4 * k, dt, "h2", "f1", &decls);
    body += "%g = aten.gelu.default(%f1)\n";
    body += linear("mlp.fc2.weight", 4 * k, k, dt, "g", "f2", &decls);
    body += "%y = aten.add.Tensor(%r1, %f2)\n";
    out = "y";
  } else {
    internal_error("unknown model type " + model_type);
  }
  const std::string name = fmt::format("{}-{}x{}x{}-{}", model_type, s.m, s.k, s.n, dt);
  const std::string text = fmt::format(
      "crucible-graph 1\nname {}\nkind forward\n\n{}\n{}\noutput %{}\n", name, decls, body, out);
  return graph::parse_graph(text, "<" + name + ">");
}

}  // namespace crucible::quant
