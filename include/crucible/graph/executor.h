// Running a graph on a backend, node by node, through the same call path cases use (the
// backend's `supports`, then `run` on bound arguments). The golden mode runs it on `ref` with
// every floating tensor promoted to f64: the arbiter a whole model is judged against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/graph/graph.h"
#include "crucible/graph/values.h"

namespace crucible::graph {

struct ExecOptions {
  uint64_t seed = 0;  // materialises the declarations (values.h)
  // f64 mode: floating inputs, parameters and buffers are materialised in their dtype, then
  // promoted to f64; floating dtype arguments (`dtype=f16`) become f64 and half_to_float False.
  bool golden = false;
  bool keep_values = false;  // also return every named value (a host copy taken as it is made)
  const TensorMap* weights = nullptr;  // params and buffers by name (safetensors.h)
  std::string weights_file;            // names `weights` in errors
  const TensorMap* inputs = nullptr;   // inputs by name (recorded ones); the others drawn
  std::string inputs_file;             // names `inputs` in errors
  // An honest-rounding perturbation (not with golden): every floating input and parameter is
  // multiplied element-wise by 1 + d, d uniform within +-perturb_ulps units of its dtype's
  // rounding, and so is every output of an op that accumulates (whose catalog tolerance widens
  // with its reduction length), within perturb_ulps times that widening (about the square root
  // of the length), as a kernel that accumulates in the dtype rounds; ops that round once or
  // are exact, constants and buffers stay as they are. Drawn from perturb_seed. Runs so
  // perturbed show how far honest rounding carries through the graph (its conditioning).
  // 0: none.
  double perturb_ulps = 0;
  uint64_t perturb_seed = 0;
  // Every declaration already on the backend's device (upload_declarations): used as it is,
  // nothing materialised, uploaded or checked again -- the repeated, timed runs of one graph
  // (crucible bench). Not with golden or perturb_ulps.
  const TensorMap* resident = nullptr;
  // The outputs stay on the backend's device (ExecResult::outputs are the backend's own tensors,
  // not host copies, and nothing waits for them): the caller synchronizes before it reads or
  // times them.
  bool device_outputs = false;
};

struct ExecResult {
  std::vector<Tensor> outputs;  // host tensors, in the order of Graph::outputs
  TensorMap values;             // keep_values: every named value, declarations included
};

// Every op the backend lacks for this graph, one line each ("aten.X.Y: why", the first node
// that needs it named with its line); empty when it can run every node. Decided from the specs,
// before anything runs: `has_op`, then `supports` on meta tensors of each node's call (for a
// backend from outside, whose `supports` runs its own code, `has_op` only).
std::vector<std::string> missing_ops(const Graph& g, const Backend& backend, bool golden = false);

// Runs the graph (the backend seeded with options.seed first). An op the backend lacks is an
// Unsupported error listing every missing op, raised before anything runs; an error while running
// names the node (file:line and its statement).
ExecResult execute(const Graph& g, Backend& backend, const ExecOptions& options = {});
// The graph's declarations materialised as `options` says (seed, weights, inputs) and put on the
// backend's device once, for ExecOptions::resident; first checks that the backend can run every
// node (the Unsupported error of execute).
TensorMap upload_declarations(const Graph& g, Backend& backend, const ExecOptions& options);
// The same on a backend created by name through the backend registry ("ref", "cpu", "dir:...").
// With options.golden the backend must be "ref".
ExecResult execute(const Graph& g, const std::string& backend, const ExecOptions& options = {});

}  // namespace crucible::graph
