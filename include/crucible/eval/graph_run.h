// A whole graph run in an isolated worker process (the eval workers' machinery): a crash, a hang
// past the timeout or an allocation past the memory limit is the run's verdict, never the end of
// the process that asked. Kernels from outside (plugin:, dir:) run sandboxed, as in `crucible run`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crucible/graph/executor.h"
#include "crucible/graph/graph.h"

namespace crucible {

struct GraphRunOptions {
  std::string backend;      // a backend registry name
  graph::ExecOptions exec;  // seed, golden, weights (keep_values is not carried back)
  double timeout_s = 600;
  size_t memory_limit = size_t{4} << 30;  // bytes, 0: none
  bool sandbox = true;                    // untrusted backends run sandboxed
  int threads = 0;                        // per backend call; 0: the backend's default
};

struct GraphRunResult {
  enum class Status : uint8_t { Ok, Error, Crashed, TimedOut, MemoryLimit } status = Status::Ok;
  std::string detail;           // what went wrong (not Ok)
  std::vector<Tensor> outputs;  // Ok: the graph's outputs, in order
};
const char* graph_run_status_name(GraphRunResult::Status s);  // "ok", "crashed", ...

// Runs `g` in a forked worker. Refused before forking (as Errors): an unknown backend, a backend
// that cannot run every op of the graph, weights that do not match the graph, a sandbox this
// machine cannot enter.
GraphRunResult run_graph_isolated(const graph::Graph& g, const GraphRunOptions& options);

}  // namespace crucible
