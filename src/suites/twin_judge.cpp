// A zoo model against its PyTorch twin (see twin_judge.h).
#include "suites/twin_judge.h"

#include <random>
#include <set>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/safetensors.h"

namespace crucible {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_transposed(const TwinSpec& spec, const std::string& theirs) {
  for (const std::string& s : spec.transposed)
    if (ends_with(theirs, s)) return true;
  return false;
}

// The tensor the tied name stands for (itself when untied).
std::string tied_to(const TwinSpec& spec, const std::string& theirs) {
  const auto it = spec.same_as.find(theirs);
  return it == spec.same_as.end() ? theirs : it->second;
}

// `t` in the zoo's layout, a copy of its own.
Tensor in_zoo_layout(const TwinSpec& spec, const std::string& theirs, const Tensor& t) {
  return is_transposed(spec, theirs) ? t.transpose(0, 1).clone() : t.clone();
}

// a + b element by element, rounded to a's dtype (both of one shape).
Tensor plus(const Tensor& a, const Tensor& b) {
  Tensor out = a.clone();
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, a.get(i) + b.get(i));
  return out;
}

// Noise on the drawn parameters whose initialiser is a constant.
void jitter(const graph::Graph& g, const TwinSpec& spec, graph::TensorMap& values) {
  std::mt19937_64 rng(spec.seed * 7919 + 17);
  std::normal_distribution<double> normal(0.0, spec.jitter);
  for (const graph::Declaration& d : g.decls) {
    if (d.kind != graph::DeclKind::Param) continue;
    if (d.init.kind != graph::Initializer::Kind::Zeros &&
        d.init.kind != graph::Initializer::Kind::Ones)
      continue;
    Tensor& t = values.at(d.name);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) + normal(rng));
  }
}

}  // namespace

std::string twin_name_in_zoo(const TwinSpec& spec, const std::string& theirs) {
  std::string name = theirs;
  for (const auto& [from, to] : spec.renames) {
    const size_t at = name.find(from);
    if (at != std::string::npos) name.replace(at, from.size(), to);
  }
  return name;
}

TwinRun run_twin(const TwinSpec& spec, Backend& candidate, const ModelJudgeOptions& options) {
  return run_twin(spec, std::vector<Backend*>{&candidate}, options).front();
}

std::vector<TwinRun> run_twin(const TwinSpec& spec, const std::vector<Backend*>& candidates,
                              const ModelJudgeOptions& options) {
  const auto model = models::make_model(spec.cls, spec.init_args);
  const models::Captured ours = models::capture(*model, spec.cls + "-twin", spec.test, true);
  const graph::Graph theirs = graph::read_graph(spec.graph);

  // The twin's values: its weights (read or drawn), its inputs and upstream gradient (drawn).
  graph::TensorMap values;
  if (!spec.weights.empty()) {
    const graph::TensorMap w = graph::read_safetensors(spec.weights).tensors;
    values = graph::materialize_declarations(theirs, spec.seed, &w, spec.weights);
  } else {
    values = graph::materialize_declarations(theirs, spec.seed);
    jitter(theirs, spec, values);
  }
  for (const auto& [alias, target] : spec.same_as) {
    if (!values.contains(alias) || !values.contains(target))
      input_error(spec.graph,
                  "tied tensors " + alias + " and " + target + " are not both declared");
    if (values.at(alias).shape() != values.at(target).shape())
      input_error(spec.graph, "tied tensors " + alias + " and " + target + " differ in shape");
    values[alias] = values.at(target).clone();
  }
  graph::TensorMap their_in;
  for (const graph::Declaration& d : theirs.decls)
    if (d.kind == graph::DeclKind::Input) their_in[d.name] = values.at(d.name);
  if (spec.adjust_inputs) spec.adjust_inputs(their_in);

  // The zoo model's: each parameter the value of its counterpart, each input the twin's.
  std::map<std::string, std::string> counterpart;  // zoo parameter -> the twin's
  for (const graph::Declaration& d : theirs.decls)
    if (d.kind == graph::DeclKind::Param && !spec.same_as.contains(d.name))
      counterpart[twin_name_in_zoo(spec, d.name)] = d.name;
  graph::TensorMap our_w = graph::materialize_declarations(ours.graph, spec.seed);
  graph::TensorMap our_in;
  for (const graph::Declaration& d : ours.graph.decls) {
    if (d.kind == graph::DeclKind::Input) {
      const std::string name = d.name == "tangent" ? "tangent0" : d.name;
      if (!their_in.contains(name))
        input_error(spec.graph, "has no input " + name + " for " + spec.cls + "'s " + d.name);
      our_in[d.name] = their_in.at(name);
      continue;
    }
    if (d.kind != graph::DeclKind::Param) continue;
    const auto it = counterpart.find(d.name);
    if (it == counterpart.end())
      input_error(spec.graph, "has no parameter that " + spec.cls + "'s " + d.name + " stands for");
    Tensor v = in_zoo_layout(spec, it->second, values.at(it->second));
    if (v.shape() != d.spec.shape)
      input_error(spec.graph, fmt::format("{} is {} in the twin and {} in {}", d.name,
                                          shape_str(v.shape()), shape_str(d.spec.shape), spec.cls));
    our_w[d.name] = v;
  }

  graph::ExecOptions base{.seed = spec.seed};
  base.weights = &values;
  base.inputs = &their_in;
  graph::ExecOptions golden_exec = base;
  golden_exec.golden = true;
  const graph::ExecResult golden = graph::execute(theirs, "ref", golden_exec);
  const std::vector<graph::ExecResult> baselines = baseline_runs(theirs, options, base);
  graph::ExecOptions cand_exec{.seed = spec.seed};
  cand_exec.weights = &our_w;
  cand_exec.inputs = &our_in;

  // Each output of the zoo model with the twin's it stands for (tied ones added).
  TwinRun twin;
  std::set<std::string> used;
  for (const graph::GraphOutput& o : theirs.outputs)
    if (o.kind == graph::GraphOutput::Kind::Grad) ++twin.twin_grads;
  std::vector<size_t> judged;  // the zoo graph's output of each of twin.outputs
  for (size_t k = 0; k < ours.graph.outputs.size(); ++k) {
    const graph::GraphOutput& out = ours.graph.outputs[k];
    if (out.kind == graph::GraphOutput::Kind::Output) continue;
    TwinOutput t;
    t.what = out.kind == graph::GraphOutput::Kind::Loss ? "loss" : "grad " + out.param;
    const Shape shape = ours.graph.value(out.value).spec.shape;
    for (size_t i = 0; i < theirs.outputs.size(); ++i) {
      const graph::GraphOutput& o = theirs.outputs[i];
      if (o.kind != out.kind) continue;
      if (o.kind == graph::GraphOutput::Kind::Grad &&
          twin_name_in_zoo(spec, tied_to(spec, o.param)) != out.param)
        continue;
      const std::string name = o.kind == graph::GraphOutput::Kind::Loss ? "loss" : o.param;
      Tensor g = in_zoo_layout(spec, name, golden.outputs[i]);
      t.golden = t.golden.defined() ? plus(t.golden, g) : g;
      for (size_t j = 0; j < baselines.size(); ++j) {
        Tensor b = in_zoo_layout(spec, name, baselines[j].outputs[i]);
        if (t.baselines.size() <= j)
          t.baselines.push_back(b);
        else
          t.baselines[j] = plus(t.baselines[j], b);
      }
      t.theirs.push_back(name);
      used.insert(name);
    }
    if (t.theirs.empty())
      input_error(spec.graph, "returns nothing that " + spec.cls + "'s " + t.what + " stands for");
    if (t.golden.shape() != shape)
      input_error(spec.graph, fmt::format("{}: {} in the twin, {} in {}", t.what,
                                          shape_str(t.golden.shape()), shape_str(shape), spec.cls));
    twin.outputs.push_back(std::move(t));
    judged.push_back(k);
  }
  used.erase("loss");
  twin.twin_grads_used = used.size();

  // The twin's runs serve every candidate.
  std::vector<TwinRun> runs;
  for (Backend* b : candidates) {
    const graph::ExecResult cand = graph::execute(ours.graph, *b, cand_exec);
    TwinRun run = twin;
    for (size_t i = 0; i < run.outputs.size(); ++i)
      run.outputs[i].candidate = cand.outputs[judged[i]];
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<ArbiterCheck> judge_twin(const TwinRun& run, double k) {
  std::vector<ArbiterCheck> checks;
  for (const TwinOutput& o : run.outputs)
    checks.push_back(arbitrate(o.golden, o.baselines, o.candidate, {.k = k}, o.what));
  return checks;
}

}  // namespace crucible
