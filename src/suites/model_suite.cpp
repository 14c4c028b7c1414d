// The model suite (see model_suite.h).
#include "suites/model_suite.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/node_inputs.h"
#include "crucible/graph/parse.h"
#include "crucible/quant/bench.h"
#include "crucible/quant/rewrite.h"
#include "suites/model_judge.h"
#include "suites/trace_shapes.h"
#include "suites/zoo_cases.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

// The graph's name as its `name` statement gives it, read without parsing the file (a filter
// then parses only the graphs it selects); the file's stem when the statement is not found.
std::string graph_name_of(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("name ", 0) == 0) {
      std::string name = line.substr(5);
      if (auto hash = name.find('#'); hash != std::string::npos) name.resize(hash);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.pop_back();
      return name;
    }
    if (line.rfind("input ", 0) == 0 || line.rfind("%", 0) == 0) break;
  }
  return fs::path(file).stem().string();
}

bool selected(const std::string& name, const std::vector<std::string>& filter) {
  if (filter.empty()) return true;
  return std::any_of(filter.begin(), filter.end(),
                     [&](const std::string& t) { return name.find(t) != std::string::npos; });
}

// --quant: the model quantized by `recipe` on the candidate, against the unquantized model's
// f64 golden (SQNR per output, beside the unquantized candidate's own), and its time against
// the unquantized model on the same candidate (alternating runs, medians). Passes when every
// output of the quantized model is finite; the figures are in the detail.
void judge_quantized(const graph::Graph& g, Backend& candidate, const quant::Recipe& recipe,
                     uint64_t seed, CaseResult& r) {
  if (g.kind != "forward") {
    r.status = Status::Unsupported;
    r.detail = "--quant applies to forward graphs; " + g.name + " is a " + g.kind + " graph";
    return;
  }
  const graph::TensorMap values = graph::materialize_declarations(g, seed);
  graph::TensorMap params, inputs;
  for (const graph::Declaration& d : g.decls)
    (d.kind == graph::DeclKind::Input ? inputs : params)[d.name] = values.at(d.name);
  const quant::QuantizedGraph q = quant::apply_recipe(recipe, g, params);
  if (recipe.kind != quant::RecipeKind::None && q.layers == 0) {
    r.status = Status::Unsupported;
    r.detail = "recipe " + recipe.name +
               " found no linear layer (addmm or mm with a parameter "
               "weight) in " +
               g.name;
    return;
  }
  const std::vector<std::string> missing = graph::missing_ops(q.graph, candidate);
  if (!missing.empty()) {
    r.status = Status::Unsupported;
    r.detail = fmt::format("the quantized model needs ops the candidate lacks: {}",
                           fmt::join(missing, "; "));
    return;
  }
  auto exec = [&](const graph::Graph& graph_, const graph::TensorMap& w, bool golden, Backend& b) {
    graph::ExecOptions e;
    e.seed = seed;
    e.weights = &w;
    e.weights_file = "<model weights>";
    e.inputs = &inputs;
    e.inputs_file = "<model inputs>";
    e.golden = golden;
    return graph::execute(graph_, b, e).outputs;
  };
  auto ref = BackendRegistry::instance().create("ref");
  const std::vector<Tensor> golden = exec(g, params, true, *ref);
  std::vector<double> tu, tq;
  std::vector<Tensor> plain, quantized;
  for (int s = 0; s < 4; ++s) {  // the first turn is the warm-up
    auto t0 = std::chrono::steady_clock::now();
    plain = exec(g, params, false, candidate);
    auto t1 = std::chrono::steady_clock::now();
    quantized = exec(q.graph, q.weights, false, candidate);
    auto t2 = std::chrono::steady_clock::now();
    if (s == 0) continue;
    tu.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    tq.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::sort(tu.begin(), tu.end());
  std::sort(tq.begin(), tq.end());
  const double mu = tu[tu.size() / 2], mq = tq[tq.size() / 2];
  std::string detail = fmt::format("recipe {} on {} linear layers: ", recipe.name, q.layers);
  bool finite = true;
  for (size_t i = 0; i < golden.size(); ++i) {
    const double sq = quant::sqnr_db(golden[i], quantized[i]);
    const double su = quant::sqnr_db(golden[i], plain[i]);
    finite = finite && !std::isnan(sq);
    detail += fmt::format("output {} SQNR vs f64 golden {:.1f} dB (unquantized {:.1f} dB); ",
                          g.outputs[i].value, sq, su);
  }
  detail +=
      fmt::format("time {:.3f} ms vs unquantized {:.3f} ms (speed-up {:.2f}x)", mq, mu, mu / mq);
  r.status = finite ? Status::Passed : Status::Failed;
  r.detail = finite ? detail : "a quantized output holds NaN or inf; " + detail;
}

}  // namespace

std::vector<SuiteCase> model_suite(const SuiteOptions& o, const std::string& path) {
  if (!o.ops.empty())
    usage_error("--ops does not apply to --suite model: choose models with --model-filter");
  if (!o.dtypes.empty()) usage_error("--dtypes does not apply to --suite model");
  if (o.perf)
    usage_error(
        "--perf does not apply to --suite model (bench/ times whole models on cpu "
        "against aten)");
  std::optional<quant::Recipe> recipe;
  if (!o.quant.empty()) recipe = quant::parse_recipe(o.quant, "--quant");
  // `model:zoo`: the zoo alone (models written in C++, src/models).
  if (path == "zoo") {
    std::vector<SuiteCase> zoo = zoo_suite_cases(o);
    if (zoo.empty())
      usage_error(fmt::format("--model-filter {} matches no zoo model (crucible models lists them)",
                              fmt::join(o.model_filter, ",")));
    return zoo;
  }
  std::string where = path;
  if (where.empty()) {
    where = shipped_data_dir("models", "CRUCIBLE_MODELS");
    if (where.empty())
      usage_error(
          "--suite model: the shipped models (data/models) are not found next to the "
          "program; give a graph file or folder: --suite model:<file or folder>");
  }
  std::vector<std::shared_ptr<const graph::Graph>> graphs;
  std::map<std::string, std::string> names;  // graph name -> file
  std::vector<std::string> all_names;
  for (const std::string& file : graph::graph_files(where)) {
    // `model` alone runs the shipped models' tiny configurations.
    if (path.empty() && fs::path(file).filename().string().find("-tiny-") == std::string::npos)
      continue;
    const std::string name = graph_name_of(file);
    all_names.push_back(name);
    if (!selected(name, o.model_filter)) continue;
    auto g = std::make_shared<const graph::Graph>(graph::read_graph(file));
    if (auto [it, fresh] = names.emplace(g->name, file); !fresh)
      input_error(file, fmt::format("graph name '{}' is also the name of {}; each model of a "
                                    "suite needs its own name",
                                    g->name, it->second));
    graphs.push_back(std::move(g));
  }
  // `model` alone also runs the zoo.
  std::vector<SuiteCase> zoo = path.empty() ? zoo_suite_cases(o) : std::vector<SuiteCase>{};
  if (graphs.empty() && zoo.empty())
    usage_error(fmt::format("--model-filter {} matches no model; the models are: {}",
                            fmt::join(o.model_filter, ","), fmt::join(all_names, ", ")));

  std::vector<SuiteCase> out;
  for (const auto& g : graphs) {
    SuiteCase sc;
    sc.c.op = "model:" + g->name;
    sc.c.seed = o.seed;
    sc.c.label = g->kind;
    sc.c.source = g->file;
    const ModelJudgeOptions judge{.seed = o.seed, .k = o.model_k, .fallback = o.fallback};
    const Case c = sc.c;
    sc.evaluate = [g, judge, c, recipe](Backend&, Backend& candidate) {
      CaseResult r;
      r.case_id = c.id();
      r.op = c.op;
      r.label = c.label;
      r.source = c.source;
      r.seed = c.seed;
      const auto t0 = std::chrono::steady_clock::now();
      if (recipe)
        judge_quantized(*g, candidate, *recipe, judge.seed, r);
      else
        judge_model(*g, candidate, judge, r);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return r;
    };
    const std::string file = g->file;
    const std::string quant_flag = o.quant.empty() ? "" : " --quant " + o.quant;
    sc.reproducer = [file, judge, quant_flag](const std::string& backend) {
      std::string cmd = fmt::format("crucible run --suite model:{} --backend {} --seed {}", file,
                                    backend, judge.seed);
      if (judge.k != 3.0) cmd += fmt::format(" --model-k {}", judge.k);
      if (!judge.fallback.empty()) cmd += " --fallback " + judge.fallback;
      return cmd + quant_flag;
    };
    out.push_back(std::move(sc));
  }
  for (SuiteCase& sc : zoo) out.push_back(std::move(sc));
  return out;
}

}  // namespace crucible
