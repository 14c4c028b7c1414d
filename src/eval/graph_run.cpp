// A graph run in a worker process: the outputs come back as a safetensors file, the verdict as
// a small safetensors payload; both are checked before they are believed.
#include "crucible/eval/graph_run.h"

#include <algorithm>
#include <csignal>
#include <memory>
#include <thread>

#include "crucible/core/error.h"
#include "crucible/eval/workers.h"
#include "crucible/graph/safetensors.h"
#include "eval/candidate_isolation.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace {

std::string error_payload(GraphRunResult::Status s, const std::string& what) {
  return graph::safetensors_bytes({}, {{"status", graph_run_status_name(s)}, {"detail", what}});
}

}  // namespace

const char* graph_run_status_name(GraphRunResult::Status s) {
  switch (s) {
    case GraphRunResult::Status::Ok:
      return "ok";
    case GraphRunResult::Status::Error:
      return "error";
    case GraphRunResult::Status::Crashed:
      return "crashed";
    case GraphRunResult::Status::TimedOut:
      return "timed_out";
    case GraphRunResult::Status::MemoryLimit:
      return "memory_limit";
  }
  return "?";
}

GraphRunResult run_graph_isolated(const graph::Graph& g, const GraphRunOptions& o) {
  // Created once here (a kernel folder compiles, a plugin is probed), then again in the worker.
  const std::unique_ptr<Backend> probe = BackendRegistry::instance().create(o.backend);
  const std::vector<std::string> missing = graph::missing_ops(g, *probe, o.exec.golden);
  if (!missing.empty()) {
    std::string s;
    for (const std::string& m : missing) s += (s.empty() ? "" : "; ") + m;
    unsupported(g.file + ": backend " + probe->name() + " cannot run " +
                std::to_string(missing.size()) + " op(s) of graph " + g.name + ": " + s);
  }
  if (o.exec.weights) graph::check_weights(g, *o.exec.weights, o.exec.weights_file);
  if (o.exec.inputs) graph::check_inputs(g, *o.exec.inputs, o.exec.inputs_file);
  std::unique_ptr<ScratchRoot> scratch;
  std::unique_ptr<SandboxOptions> sandbox;
  if (probe->untrusted() && o.sandbox) {
    scratch = std::make_unique<ScratchRoot>();
    sandbox = std::make_unique<SandboxOptions>();
    sandbox->scratch_root = scratch->path();
    sandbox->cpu_seconds_per_job =
        4 * o.timeout_s * std::max(1u, std::thread::hardware_concurrency()) + 1;
    const std::string why = probe_sandbox(*sandbox);
    if (!why.empty()) {
      usage_error("the sandbox for untrusted kernels cannot be set up on this machine: " + why);
    }
  }

  // The outputs go through a file (a training graph's gradients outgrow a worker's frames).
  const ScratchRoot outputs_dir;
  const std::string outputs_path = outputs_dir.path() + "/outputs.safetensors";
  std::unique_ptr<Backend> backend;  // the worker's, created after the fork
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = o.timeout_s;
  wo.memory_limit = o.memory_limit;
  wo.max_batch = 1;
  wo.on_worker_start = [&] {
    set_allocation_limit(o.memory_limit);
    backend = BackendRegistry::instance().create(o.backend);
    const CandidateIsolation iso = worker_candidate_isolation(sandbox.get());
    backend->isolate_candidates(iso);  // first: its zygote forks before any thread pool starts
    if (o.threads > 0) backend->set_num_threads(o.threads);
  };
  WorkerPool pool(wo, [&](size_t) {
    sandbox_job_started();
    graph::ExecOptions exec = o.exec;
    exec.keep_values = false;
    try {
      const graph::ExecResult r = graph::execute(g, *backend, exec);
      std::vector<std::pair<std::string, Tensor>> ts;
      for (size_t i = 0; i < r.outputs.size(); ++i) {
        if (r.outputs[i].defined()) ts.emplace_back(std::to_string(i), r.outputs[i]);
      }
      graph::write_safetensors(outputs_path, ts);
      return graph::safetensors_bytes({}, {{"status", "ok"}});
    } catch (const Error& e) {
      return error_payload(e.kind() == ErrorKind::Memory ? GraphRunResult::Status::MemoryLimit
                                                         : GraphRunResult::Status::Error,
                           e.what());
    } catch (const std::bad_alloc&) {
      return error_payload(GraphRunResult::Status::MemoryLimit,
                           "allocation failed (std::bad_alloc)");
    }
  });
  GraphRunResult result;
  result.status = GraphRunResult::Status::Crashed;
  result.detail = "the worker reported nothing";
  pool.run(
      {0},
      [&](size_t, const std::string& payload) {
        // The worker's bytes are checked: a payload that is not a report of this graph's outputs
        // is the run's verdict (crashed, malformed report).
        graph::Safetensors st;
        try {
          st = graph::parse_safetensors(payload, "the worker's report");
        } catch (const Error& e) {
          throw MalformedReport(e.what());
        }
        const auto status = st.metadata.find("status");
        if (status == st.metadata.end()) throw MalformedReport("no status");
        if (status->second != "ok") {
          const auto detail = st.metadata.find("detail");
          result.status = status->second == "memory_limit" ? GraphRunResult::Status::MemoryLimit
                                                           : GraphRunResult::Status::Error;
          result.detail = detail == st.metadata.end() ? status->second : detail->second;
          return;
        }
        try {
          st = graph::read_safetensors(outputs_path);
        } catch (const Error& e) {
          throw MalformedReport(std::string("its outputs: ") + e.what());
        }
        std::vector<Tensor> outs(g.outputs.size());
        for (auto& [name, t] : st.tensors) {
          size_t i = 0;
          try {
            i = std::stoul(name);
          } catch (const std::exception&) {
            throw MalformedReport("an output named '" + name + "'");
          }
          if (i >= outs.size() || std::to_string(i) != name)
            throw MalformedReport("an output named '" + name + "'");
          outs[i] = t;
        }
        result.status = GraphRunResult::Status::Ok;
        result.detail.clear();
        result.outputs = std::move(outs);
      },
      [&](size_t, const JobFailure& f) {
        result.status = f.kind == JobFailure::Kind::TimedOut ? GraphRunResult::Status::TimedOut
                                                             : GraphRunResult::Status::Crashed;
        result.detail = f.detail;
        if (sandbox && f.signal == SIGSYS && f.detail.find("sandbox:") == std::string::npos)
          result.detail += ": " + sandbox_unexplained_sigsys();
      });
  return result;
}

}  // namespace crucible
