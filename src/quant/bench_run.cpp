// Running the micro-benchmark: each model built and quantized, its outputs judged against the
// high-precision output and the f64 reference, then the baseline, the recipe and the recipe's
// activation quantization timed in alternating turns.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/quant/bench.h"
#include "crucible/quant/rewrite.h"
#include "quant/bench_models.h"

namespace crucible::quant {
namespace {

using Clock = std::chrono::steady_clock;

// Normal activations with outlier channels (as LLM activations have): a fraction of the input
// channels scaled up.
Tensor realistic_input(const graph::TensorSpec& spec, const BenchOptions& o, uint64_t seed) {
  const int64_t m = spec.shape[0], k = spec.shape[1];
  Rng rng(seed, 0x51a7);
  Tensor x = Tensor::uninitialized(spec.shape, spec.dtype);
  const int64_t outliers =
      std::max<int64_t>(1, static_cast<int64_t>(std::lround(o.outlier_fraction * k)));
  std::vector<double> gain(static_cast<size_t>(k), 1.0);
  for (int64_t c = 0; c < outliers; ++c)
    gain[static_cast<size_t>((c * 7919 + 13) % k)] = o.outlier_scale;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < k; ++c) x.set(i * k + c, rng.normal() * gain[static_cast<size_t>(c)]);
  return x;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The recipe's activation quantization as a graph of its own: the quantized graph's `__aq_`
// statements, the values they read declared as inputs.
std::optional<graph::Graph> activation_graph(const graph::Graph& q) {
  std::istringstream in(graph::print_graph(q));
  std::string line, nodes, decls, outputs;
  std::set<std::string> defined, inputs;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (!line.starts_with("%")) continue;
    const std::string lhs = line.substr(0, line.find(" = "));
    if (lhs.find("__aq_") == std::string::npos) continue;
    lines.push_back(line);
  }
  if (lines.empty()) return std::nullopt;
  for (const std::string& l : lines) {
    const std::string lhs = l.substr(0, l.find(" = "));
    std::string rhs = l.substr(l.find(" = ") + 3);
    rhs = rhs.substr(0, rhs.find(" -> "));
    for (size_t p = rhs.find('%'); p != std::string::npos; p = rhs.find('%', p + 1)) {
      size_t e = p + 1;
      while (e < rhs.size() &&
             (std::isalnum(static_cast<unsigned char>(rhs[e])) || rhs[e] == '_' || rhs[e] == '.'))
        ++e;
      const std::string name = rhs.substr(p + 1, e - p - 1);
      if (!defined.count(name) && inputs.insert(name).second)
        decls += fmt::format("input %{} : {} normal(0, 1)\n", name, q.value(name).spec.str());
    }
    for (size_t p = lhs.find('%'); p != std::string::npos; p = lhs.find('%', p + 1)) {
      size_t e = p + 1;
      while (e < lhs.size() && lhs[e] != ',' && lhs[e] != ' ') ++e;
      const std::string name = lhs.substr(p + 1, e - p - 1);
      defined.insert(name);
      if (name.find("__aq_xq") != std::string::npos || name.find("__aq_x8") != std::string::npos)
        outputs += "output %" + name + "\n";
    }
    nodes += l + "\n";
  }
  return graph::parse_graph("crucible-graph 1\nname activation-quantization\nkind forward\n\n" +
                                decls + "\n" + nodes + "\n" + outputs,
                            "<activation quantization>");
}

struct Prepared {
  graph::Graph g;
  graph::TensorMap values;  // params, buffers and the input
  graph::TensorMap input;
  Tensor golden, baseline;
  double baseline_sqnr = 0;
};

graph::ExecOptions exec_options(const graph::TensorMap& weights, const graph::TensorMap& inputs,
                                uint64_t seed) {
  graph::ExecOptions e;
  e.seed = seed;
  e.weights = &weights;
  e.weights_file = "<quantized weights>";
  e.inputs = &inputs;
  e.inputs_file = "<activations>";
  return e;
}

}  // namespace

double sqnr_db(const Tensor& ref, const Tensor& out) {
  const Tensor r = ref.contiguous().to(DType::Float64), o = out.contiguous().to(DType::Float64);
  double sig = 0, noise = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    const double a = r.data<double>()[i], b = o.data<double>()[i];
    if (!std::isfinite(a) || !std::isfinite(b)) return std::nan("");
    sig += a * a;
    noise += (a - b) * (a - b);
  }
  if (noise == 0) return 300;
  return std::min(300.0, 10 * std::log10(sig / noise));
}

std::vector<BenchRow> run_bench(const BenchConfig& config, const BenchOptions& o,
                                const std::function<void(const BenchRow&)>& progress) {
  std::vector<BenchRow> rows;
  auto backend = BackendRegistry::instance().create(o.backend);
  auto ref = BackendRegistry::instance().create("ref");
  for (const ModelParams& mp : config.models) {
    // The model runs where the config says: a backend on another device is an error, not a
    // silent run elsewhere.
    const bool on_cuda = backend->device().type == DeviceType::CUDA;
    if ((mp.device == "cuda") != on_cuda)
      usage_error(fmt::format("model_params '{}' has device: {}, and --backend {} runs on {}: {}",
                              mp.name, mp.device, o.backend, on_cuda ? "cuda" : "cpu",
                              mp.device == "cuda" ? "run it with --backend aten:cuda"
                                                  : "set device: cuda in the config"));
    for (const MatrixShape& shape : mp.shapes) {
      Prepared p{bench_model(mp.model_type, shape, mp.high_precision_dtype), {}, {}, {}, {}, 0};
      p.values = graph::materialize_declarations(p.g, o.seed);
      const graph::Declaration* xd = p.g.find_decl("x");
      p.input["x"] =
          realistic_input(xd->spec, o, o.seed + static_cast<uint64_t>(shape.m * 31 + shape.k));
      graph::TensorMap params;
      for (const auto& [name, t] : p.values)
        if (name != "x") params[name] = t;
      graph::ExecOptions gold = exec_options(params, p.input, o.seed);
      gold.golden = true;
      p.golden = graph::execute(p.g, *ref, gold).outputs.at(0);
      std::string base_missing;
      for (const std::string& m : graph::missing_ops(p.g, *backend)) base_missing += m + "; ";
      if (base_missing.empty()) {
        p.baseline =
            graph::execute(p.g, *backend, exec_options(params, p.input, o.seed)).outputs.at(0);
        p.baseline_sqnr = sqnr_db(p.golden, p.baseline);
      }
      for (const Recipe& recipe : config.recipes) {
        BenchRow row;
        row.model_name = mp.name;
        row.model_type = mp.model_type;
        row.shape_label = shape.label;
        row.recipe = recipe.name;
        row.backend = o.backend;
        row.device = mp.device;
        row.m = shape.m, row.k = shape.k, row.n = shape.n;
        row.dtype = mp.high_precision_dtype;
        row.baseline_sqnr_f64_db = p.baseline_sqnr;
        try {
          if (!base_missing.empty())
            unsupported("the high-precision model cannot run: " + base_missing);
          const QuantizedGraph q = apply_recipe(recipe, p.g, params);
          row.layers = q.layers;
          if (recipe.kind != RecipeKind::None && q.layers == 0)
            internal_error("recipe " + recipe.name + " rewrote no layer of " + mp.model_type);
          std::string missing;
          for (const std::string& m : graph::missing_ops(q.graph, *backend)) missing += m + "; ";
          if (!missing.empty()) unsupported("backend '" + o.backend + "' lacks: " + missing);
          const graph::ExecOptions qe = exec_options(q.weights, p.input, o.seed);
          const graph::ExecOptions be = exec_options(params, p.input, o.seed);
          const Tensor out = graph::execute(q.graph, *backend, qe).outputs.at(0);
          row.sqnr_db = sqnr_db(p.baseline, out);
          row.sqnr_f64_db = sqnr_db(p.golden, out);
          // The activation quantization alone, on inputs of the same shapes.
          const std::optional<graph::Graph> act = activation_graph(q.graph);
          graph::TensorMap act_in;
          if (act)
            for (const graph::Declaration& d : act->decls)
              act_in[d.name] = graph::materialize_declaration(d, o.seed);
          const graph::TensorMap none;
          const graph::ExecOptions ae = exec_options(none, act_in, o.seed);
          // The timed runs: every declaration (weights, inputs) put on the backend's device
          // once, the outputs left there, each run ended by waiting for the device. A run
          // times the model's ops, not the materialisation or the copies.
          const graph::TensorMap rb = graph::upload_declarations(p.g, *backend, be);
          const graph::TensorMap rq = graph::upload_declarations(q.graph, *backend, qe);
          const graph::TensorMap ra =
              act ? graph::upload_declarations(*act, *backend, ae) : graph::TensorMap{};
          auto resident = [](const graph::TensorMap& r) {
            graph::ExecOptions e;
            e.resident = &r;
            e.device_outputs = true;
            return e;
          };
          const graph::ExecOptions tbe = resident(rb), tqe = resident(rq), tae = resident(ra);
          Backend& b = *backend;
          auto timed = [&b](const graph::Graph& g, const graph::ExecOptions& e) {
            const auto t0 = Clock::now();
            graph::execute(g, b, e);
            b.synchronize();
            return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
          };
          // Warm-up, then alternating samples.
          timed(p.g, tbe);
          timed(q.graph, tqe);
          if (act) timed(*act, tae);
          std::vector<double> tb, tq, ta;
          const auto start = Clock::now();
          for (int s = 0; s < o.samples; ++s) {
            tb.push_back(timed(p.g, tbe));
            tq.push_back(timed(q.graph, tqe));
            if (act) ta.push_back(timed(*act, tae));
            if (std::chrono::duration<double>(Clock::now() - start).count() > o.max_seconds) break;
          }
          row.samples = static_cast<int>(tb.size());
          row.baseline_ms = median(tb);
          row.recipe_ms = median(tq);
          row.act_quant_ms = act ? median(ta) : 0.0;
          // Timed apart, the activation quantization may measure longer than the recipe's run under
          // load: then there is no figure without it (NaN), rather than a made-up one.
          row.recipe_no_act_ms =
              row.act_quant_ms < row.recipe_ms ? row.recipe_ms - row.act_quant_ms : std::nan("");
          row.speedup = row.baseline_ms / row.recipe_ms;
          row.speedup_no_act = row.baseline_ms / row.recipe_no_act_ms;
          row.status = "ok";
          if (o.min_sqnr > 0 && !(row.sqnr_db >= o.min_sqnr)) {
            row.status = "failed";
            row.reason = fmt::format("SQNR {:.1f} dB is below --min-sqnr {:.1f} dB", row.sqnr_db,
                                     o.min_sqnr);
          }
        } catch (const Error& e) {
          row.status = e.kind() == ErrorKind::Unsupported ? "unsupported" : "error";
          row.reason = e.what();
        }
        rows.push_back(row);
        if (progress) progress(row);
      }
    }
  }
  return rows;
}

}  // namespace crucible::quant
