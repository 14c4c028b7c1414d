// `crucible models`: the zoo (src/models) with parameter counts and ops; `--export <Name>`
// writes one model's captured graph (and with --weights-out its initial state dict).
#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/eval/kernel_trials.h"
#include "crucible/graph/print.h"
#include "crucible/graph/safetensors.h"
#include "crucible/graph/values.h"
#include "crucible/models/kernel_policy.h"
#include "crucible/models/zoo.h"
#include "eval/policy_judge.h"
#include "suites/model_judge.h"

#include <fstream>

namespace crucible {

CLI::App* add_models_command(CLI::App& app, ModelsFlags& f) {
  CLI::App* m = app.add_subcommand(
      "models", "list the model zoo (parameters, ops), or export a zoo model's graph");
  m->add_flag("--ops", f.ops, "list every model's forward and backward ops");
  m->add_option("--export", f.export_name, "the model whose graph to write (a zoo class name)");
  m->add_option("--test", f.test, "which of the config's model_tests (default: the first)");
  m->add_flag("--training", f.training, "the training graph (forward, loss, backward)");
  m->add_option("-o,--out", f.out, "where --export writes the graph (.graph)");
  m->add_option("--weights-out", f.weights_out,
                "also write the parameters and buffers (.safetensors, the graph's names)");
  m->add_option("--checkpoint", f.checkpoint,
                "load the parameters from this safetensors checkpoint (PyTorch names)");
  m->add_flag("--hf", f.hf,
              "the checkpoint is in Hugging Face's layout (GPT-2's transposed Conv1D weights, "
              "tied LM head, names without the outer prefix)");
  m->add_option("--run", f.run_name,
                "judge one training step of this zoo model under a kernel policy (with "
                "--backends, --policy, --force)");
  m->add_option("--backends", f.backends, "the policy's backends, in order of preference")
      ->delimiter(',');
  m->add_option("--policy", f.policy,
                "first: each op on the first backend that has it; fastest: time every backend "
                "that passed the op's correctness on the model's own calls, keep the fastest")
      ->check(CLI::IsMember({"first", "fastest"}));
  m->add_option("--force", f.force, "op=backend: run this op on that backend (repeatable)");
  m->add_option("--policy-cache", f.cache, "a JSON file caching the fastest choices");
  m->add_option("--seed", f.seed, "seed of the model's values");
  m->add_option("--timeout", f.timeout_s,
                "seconds the judged step of --run may take in its worker (default 600)")
      ->check(CLI::PositiveNumber);
  return m;
}

namespace {

std::string pick_test(const models::ModelConfig& c, const std::string& test) {
  if (test.empty()) return c.tests.front().second;
  std::string names;
  for (const auto& [name, call] : c.tests) {
    if (name == test) return call;
    names += (names.empty() ? "" : ", ") + name;
  }
  usage_error("--test " + test + ": " + c.name + " has the tests " + names);
}

}  // namespace

static int run_with_policy(const ModelsFlags& f) {
  if (f.backends.empty()) usage_error("--run needs --backends <backend,...>");
  const models::ModelConfig c = models::load_config(f.run_name);
  const auto model = models::make_model(c.name, c.init_args);
  const graph::Graph g =
      models::capture(*model, "zoo-" + c.name, c.tests.front().second, true).graph;
  models::KernelPolicy policy;
  policy.backends = f.backends;
  policy.fastest = f.policy == "fastest";
  policy.cache = f.cache;
  for (const std::string& term : f.force) {
    const auto eq = term.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == term.size())
      usage_error("--force " + term + ": expected op=backend (aten.mm.default=cpu)");
    policy.force[term.substr(0, eq)] = term.substr(eq + 1);
  }
  // fastest's trials run in a worker process: a kernel that crashes there is rejected.
  const std::vector<models::OpChoice> choices = models::choose_kernels(
      g, policy, f.seed, isolated_trial_runner({.backends = policy.backends}));
  // The judged step runs in a worker process too: a kernel that crashes, hangs or allocates
  // past the limit there is the verdict.
  CaseResult base;
  base.op = base.case_id = "model:zoo-" + c.name;
  PolicyJudgeOptions isolation;
  isolation.timeout_s = f.timeout_s;
  const PolicyJudgeResult judged = judge_policy_isolated(
      g, choices, policy.backends, ModelJudgeOptions{.seed = f.seed}, isolation, base);
  const CaseResult& r = judged.result;
  fmt::print("{} under policy {} over {}\n", r.op, f.policy, fmt::join(f.backends, ","));
  fmt::print("  {:<48} {:<10} {:>6}  {}\n", "op", "backend", "calls", "why");
  for (const models::OpChoice& ch : choices) {
    // "-": the worker died before it could count.
    const auto it = judged.ran.find(ch.op);
    const std::string calls = judged.ran.empty() && r.status != Status::Passed
                                  ? "-"
                                  : std::to_string(it == judged.ran.end() ? 0 : it->second.second);
    std::string why = ch.why;
    for (const auto& [b, s] : ch.seconds) why += fmt::format("; {} {:.3g} ms", b, s * 1e3);
    for (const auto& [b, w] : ch.rejected) why += fmt::format("; {} rejected: {}", b, w);
    fmt::print("  {:<48} {:<10} {:>6}  {}\n", ch.op, ch.backend, calls, why);
  }
  fmt::print("  verdict: {}: {}\n", status_name(r.status), r.detail);
  return r.status == Status::Passed ? 0 : 1;
}

int command_models(const ModelsFlags& f) {
  if (!f.run_name.empty()) return run_with_policy(f);
  if (!f.export_name.empty()) {
    if (f.out.empty()) usage_error("--export needs -o <file.graph>");
    const models::ModelConfig c = models::load_config(f.export_name);
    const auto model = models::make_model(c.name, c.init_args);
    if (f.hf && f.checkpoint.empty()) usage_error("--hf needs --checkpoint <file>");
    // Checked before anything is captured: a bad checkpoint is an error naming the tensor.
    std::unique_ptr<nn::Checkpoint> ckpt;
    if (!f.checkpoint.empty())
      ckpt = std::make_unique<nn::Checkpoint>(f.checkpoint, model->state(),
                                              f.hf ? model->hf_layout() : nn::CheckpointLayout{});
    const std::string name = c.name + (f.training ? "-train" : "-fwd");
    const models::Captured cap = models::capture(*model, name, pick_test(c, f.test), f.training);
    std::ofstream out(f.out);
    if (!out) input_error("-o " + f.out, "cannot be written");
    out << graph::print_graph(cap.graph);
    if (!out) input_error("-o " + f.out, "write failed");
    if (!f.weights_out.empty()) {
      std::vector<std::pair<std::string, Tensor>> tensors;
      const graph::TensorMap values = graph::materialize_declarations(cap.graph, 0);
      for (const graph::Declaration& d : cap.graph.decls)
        if (d.kind == graph::DeclKind::Param || d.kind == graph::DeclKind::Buffer)
          tensors.emplace_back(d.name, ckpt ? ckpt->get(d.name) : values.at(d.name));
      graph::write_safetensors(f.weights_out, tensors);
    }
    fmt::print("{}: {} nodes, {} ops -> {}\n", name, cap.graph.nodes.size(),
               cap.graph.ops_used().size(), f.out);
    return 0;
  }
  fmt::print("{:<18} {:>12} {:>8} {:>9}  {}\n", "model", "parameters", "fwd ops", "bwd ops",
             "description");
  for (const models::ZooEntry& e : models::zoo()) {
    const models::ModelConfig c = models::load_config(e.name);
    const auto model = e.make(c.init_args);
    fmt::print("{:<18} {:>12} {:>8} {:>9}  {}\n", e.name, model->num_parameters(),
               c.forward_ops.size(), c.backward_ops.size(), c.description);
    if (f.ops) {
      fmt::print("    forward:  {}\n", fmt::join(c.forward_ops, " "));
      fmt::print("    backward: {}\n", fmt::join(c.backward_ops, " "));
    }
  }
  return 0;
}

}  // namespace crucible
