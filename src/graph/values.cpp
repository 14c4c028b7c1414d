// Materialising a graph's declarations from their initialisers, or from loaded weights.
#include "crucible/graph/values.h"

#include <cmath>

#include "crucible/core/error.h"
#include "crucible/core/rng.h"

namespace crucible::graph {

namespace {

using Kind = Initializer::Kind;

void set_value(const Tensor& t, int64_t k, const cases::Literal& v) {
  switch (v.kind) {
    case cases::LitKind::Int:
      t.set_int(k, v.i);
      return;
    case cases::LitKind::Bool:
      t.set_int(k, v.b ? 1 : 0);
      return;
    default:
      t.set(k, v.f);
  }
}

}  // namespace

Tensor materialize_declaration(const Declaration& d, uint64_t seed) {
  const TensorSpec& s = d.spec;
  Tensor t = Tensor::empty_strided(s.shape, s.strides, s.dtype);
  const Initializer& init = d.init;
  const int64_t n = t.numel();
  Rng rng(seed, hash_str(d.name.c_str()));
  for (int64_t k = 0; k < n; ++k) {
    switch (init.kind) {
      case Kind::Normal:
        t.set(k, init.number(0) + init.number(1) * rng.normal());
        break;
      case Kind::Grad:
        t.set(k, rng.normal());
        break;
      case Kind::Uniform:
        t.set(k, init.number(0) + (init.number(1) - init.number(0)) * rng.uniform());
        break;
      case Kind::Zeros:
        t.set_int(k, 0);
        break;
      case Kind::Ones:
        t.set_int(k, 1);
        break;
      case Kind::Full:
        set_value(t, k, init.args[0]);
        break;
      case Kind::Arange:
        t.set_int(k, k);
        break;
      case Kind::Index:
        t.set_int(k, rng.integer(init.args[0].i, init.args[1].i - 1));
        break;
      case Kind::Bool:
        t.set_int(k, rng.integer(0, 1));
        break;
      case Kind::Data:
        set_value(t, k, init.args[static_cast<size_t>(k)]);
        break;
    }
  }
  return t;
}

namespace {

void check_tensor(const Declaration& d, const Tensor& t, const std::string& file) {
  if (t.dtype() != d.spec.dtype || t.shape() != d.spec.shape) {
    input_error(file + ": tensor '" + d.name + "'", "is " + std::string(dtype_code(t.dtype())) +
                                                        " " + shape_str(t.shape()) +
                                                        "; the graph declares " + d.spec.str());
  }
}

// `t` with the declaration's strides.
Tensor with_layout(const Declaration& d, const Tensor& t) {
  if (t.strides() == d.spec.strides) return t;
  Tensor out = Tensor::empty_strided(d.spec.shape, d.spec.strides, d.spec.dtype);
  out.copy_from(t);
  return out;
}

}  // namespace

void check_weights(const Graph& g, const TensorMap& weights, const std::string& weights_file) {
  for (const Declaration& d : g.decls) {
    if (d.kind != DeclKind::Param && d.kind != DeclKind::Buffer) continue;
    const auto it = weights.find(d.name);
    if (it == weights.end()) {
      input_error(weights_file + ": tensor '" + d.name + "'",
                  "missing: the graph declares " + std::string(decl_kind_name(d.kind)) + " %" +
                      d.name + " : " + d.spec.str());
    }
    check_tensor(d, it->second, weights_file);
  }
}

void check_inputs(const Graph& g, const TensorMap& inputs, const std::string& inputs_file) {
  for (const Declaration& d : g.decls) {
    if (d.kind != DeclKind::Input) continue;
    const auto it = inputs.find(d.name);
    if (it != inputs.end()) check_tensor(d, it->second, inputs_file);
  }
}

TensorMap materialize_declarations(const Graph& g, uint64_t seed, const TensorMap* weights,
                                   const std::string& weights_file, const TensorMap* inputs,
                                   const std::string& inputs_file) {
  if (weights) check_weights(g, *weights, weights_file);
  if (inputs) check_inputs(g, *inputs, inputs_file);
  TensorMap out;
  for (const Declaration& d : g.decls) {
    const TensorMap* given = d.kind == DeclKind::Param || d.kind == DeclKind::Buffer ? weights
                             : d.kind == DeclKind::Input                             ? inputs
                                                                                     : nullptr;
    const auto it = given ? given->find(d.name) : TensorMap::const_iterator{};
    if (given && it != given->end()) {
      out.emplace(d.name, with_layout(d, it->second));
    } else {
      out.emplace(d.name, materialize_declaration(d, seed));
    }
  }
  return out;
}

}  // namespace crucible::graph
