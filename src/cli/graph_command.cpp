// `crucible graph check <file>` (parse, meta, a summary) and `crucible graph run <file>` (runs
// the graph on a backend, prints each output's shape and checksums).
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/eval/graph_run.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/safetensors.h"

namespace crucible {

namespace {

std::string output_label(const graph::GraphOutput& o) {
  switch (o.kind) {
    case graph::GraphOutput::Kind::Output:
      return "output %" + o.value;
    case graph::GraphOutput::Kind::Loss:
      return "loss %" + o.value;
    case graph::GraphOutput::Kind::Grad:
      return "grad %" + o.value + " (" + o.param + ")";
  }
  return o.value;
}

int graph_check(const GraphFlags& f) {
  const graph::Graph g = graph::read_graph(f.file);
  std::map<graph::DeclKind, int> counts;
  int64_t param_elements = 0;
  for (const graph::Declaration& d : g.decls) {
    ++counts[d.kind];
    if (d.kind == graph::DeclKind::Param) param_elements += numel_of(d.spec.shape);
  }
  std::map<std::string, int> uses;
  for (const graph::Node& n : g.nodes) ++uses[n.op];
  fmt::print("graph {} ({}) from {}\n", g.name, g.kind, f.file);
  fmt::print("  declarations: {} input(s), {} param(s) ({} elements), {} buffer(s), {} const(s)\n",
             counts[graph::DeclKind::Input], counts[graph::DeclKind::Param], param_elements,
             counts[graph::DeclKind::Buffer], counts[graph::DeclKind::Const]);
  fmt::print(
      "  nodes: {}, {} distinct op(s), all in the catalog, every node checked by its op's "
      "meta function\n",
      g.nodes.size(), uses.size());
  for (const auto& [op, n] : uses) fmt::print("    {:<48} x{}\n", op, n);
  fmt::print("  returns: {}\n", g.outputs.size());
  for (const graph::GraphOutput& o : g.outputs)
    fmt::print("    {} {}\n", output_label(o), g.value(o.value).spec.str());
  if (f.backend.empty()) return 0;
  const std::unique_ptr<Backend> b = BackendRegistry::instance().create(f.backend);
  const std::vector<std::string> missing = graph::missing_ops(g, *b);
  if (missing.empty()) {
    fmt::print("  backend {}: runs every node\n", b->name());
    return 0;
  }
  fmt::print("  backend {}: cannot run {} op(s)\n", b->name(), missing.size());
  for (const std::string& m : missing) fmt::print("    {}\n", m);
  return 1;
}

int graph_run(const GraphFlags& f) {
  const graph::Graph g = graph::read_graph(f.file);
  std::string backend = f.backend;
  if (backend.empty()) backend = f.golden ? "ref" : BackendRegistry::instance().default_backend();
  graph::ExecOptions o;
  o.seed = f.seed;
  o.golden = f.golden;
  graph::Safetensors weights, inputs;
  if (!f.weights.empty()) {
    weights = graph::read_safetensors(f.weights);
    o.weights = &weights.tensors;
    o.weights_file = f.weights;
  }
  if (!f.inputs.empty()) {
    inputs = graph::read_safetensors(f.inputs);
    o.inputs = &inputs.tensors;
    o.inputs_file = f.inputs;
  }
  if (f.golden && backend != "ref")
    usage_error("--golden runs the graph on ref in f64; it takes no other --backend");
  GraphRunOptions ro;
  ro.backend = backend;
  ro.exec = o;
  ro.timeout_s = f.timeout_s;
  ro.memory_limit = f.memory_limit;
  ro.sandbox = !f.no_sandbox;
  const GraphRunResult r = run_graph_isolated(g, ro);
  fmt::print("graph {} on {}{} (seed {}{}{})\n", g.name, backend, f.golden ? " in f64" : "", f.seed,
             f.weights.empty() ? "" : ", weights " + f.weights,
             f.inputs.empty() ? "" : ", inputs " + f.inputs);
  if (r.status != GraphRunResult::Status::Ok) {
    fmt::print("  {}: {}\n", graph_run_status_name(r.status), r.detail);
    return 1;
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor& t = r.outputs[i];
    if (!t.defined()) {
      fmt::print("  {} None\n", output_label(g.outputs[i]));
      continue;
    }
    double sum = 0, abs_sum = 0;
    int64_t nonfinite = 0;
    for (int64_t k = 0; k < t.numel(); ++k) {
      const double v = t.get(k);
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      sum += v;
      abs_sum += std::abs(v);
    }
    fmt::print("  {} {} sum={:.9g} abs_sum={:.9g}{}\n", output_label(g.outputs[i]),
               graph::TensorSpec::of(t).str(), sum, abs_sum,
               nonfinite ? fmt::format(" non-finite={}", nonfinite) : "");
  }
  return 0;
}

}  // namespace

CLI::App* add_graph_command(CLI::App& app, GraphFlags& f) {
  CLI::App* graph = app.add_subcommand("graph", "check or run a model graph (docs/graphs.md)");
  graph->require_subcommand(1);
  CLI::App* check = graph->add_subcommand(
      "check", "parse a graph, check every node with the meta layer and print a summary");
  check->add_option("file", f.file, "the graph file (*.graph)")->required();
  check->add_option("--backend", f.backend, "also say whether this backend can run every node");
  CLI::App* run = graph->add_subcommand("run", "run a graph on a backend; print its outputs");
  run->add_option("file", f.file, "the graph file (*.graph)")->required();
  run->add_option("--backend", f.backend, "the backend (default: the build's default backend)");
  run->add_option("--weights", f.weights, "parameters and buffers from this safetensors file");
  run->add_option("--inputs", f.inputs,
                  "inputs from this safetensors file, by name (the others are drawn)");
  run->add_option_function<std::string>(
         "--seed",
         [&f](const std::string& s) {
           uint64_t v = 0;
           const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
           if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
             usage_error("--seed '" + s + "': expected a non-negative integer below 2^64");
           f.seed = v;
         },
         "seed of the materialised inputs and parameters (0 .. 2^64-1)")
      ->type_name("UINT");
  run->add_flag("--golden", f.golden, "run on ref with every floating tensor in f64");
  run->add_option_function<std::string>(
         "--timeout",
         [&f](const std::string& s) {
           double v = 0;
           const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
           if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !(v > 0) || v > 1e6)
             usage_error("--timeout '" + s + "': expected seconds, positive, at most 1e6");
           f.timeout_s = v;
         },
         "seconds the whole run may take (default 600); the run is killed past it")
      ->type_name("SECONDS");
  run->add_option_function<std::string>(
         "--memory-limit",
         [&f](const std::string& s) { f.memory_limit = parse_bytes(s, "--memory-limit"); },
         "memory of the worker that runs the graph, e.g. 4G, 512M (default 4G; 0 for none)")
      ->type_name("BYTES");
  run->add_flag("--no-sandbox", f.no_sandbox,
                "run kernels from outside (plugin:, dir:) without the sandbox (kernels you trust)");
  return graph;
}

int command_graph(const CLI::App& graph, const GraphFlags& f) {
  if (graph.get_subcommand("check")->parsed()) return graph_check(f);
  return graph_run(f);
}

}  // namespace crucible
