// Ops this libtorch lacks, composed of the ops it has: the aten backend's compatibility table
// for operators that newer PyTorch exports (model graphs, traces) and libtorch 1.13 does not
// register. Internal to the aten backend (libtorch headers).
#pragma once

#include <string>

#include "backends/aten/aten_convert.h"
#include "crucible/ops/op.h"

namespace crucible::aten {

// One op computed as a composition of this libtorch's ops, as PyTorch 2.x's kernel computes it.
struct Composition {
  // Runs the composition. The catalog's meta function checks the arguments first (ATen's errors)
  // and gives the layout of every fresh output, which the composition's results are copied into.
  Values (*run)(const OpDef& op, const Values& args, CallContext& ctx);
};

// The composition of `op`, or nullptr where the table has none. Consulted only for ops the
// dispatcher does not have (a libtorch that has the op runs its own kernel).
const Composition* find_composition(const std::string& op_name);

}  // namespace crucible::aten
