// The built-in suites: smoke, opinfo (opinfo:<dtype>), traces, opbyop and model.
#include "crucible/suites/suite.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/suites/opbyop.h"
#include "suites/dtype_suite.h"
#include "suites/model_suite.h"
#include "suites/trace_shapes.h"

namespace crucible {

std::optional<DType> primary_dtype(const cases::CallSpec& call) {
  for (const auto& a : call.args) {
    if (a.kind == cases::LitKind::Tensor) return a.tensor.dtype;
    if (a.kind == cases::LitKind::List || a.kind == cases::LitKind::Tuple)
      for (const auto& item : a.items)
        if (item.kind == cases::LitKind::Tensor) return item.tensor.dtype;
  }
  // A factory (no tensor argument) is of the dtype it is asked to make, when it names one.
  for (const auto& [name, v] : call.kwargs)
    if (name == "dtype" && v.kind == cases::LitKind::DType) return v.dtype;
  return std::nullopt;
}

namespace {

// How many distinct real-model calls of an op become its performance cases.
constexpr size_t kPerfTraceCallsPerOp = 4;

bool dtype_selected(const SuiteOptions& o, const cases::CallSpec& call) {
  if (o.dtypes.empty()) return true;
  auto d = primary_dtype(call);
  return d && o.dtypes.count(*d);
}

std::vector<const OpDef*> selected_ops(const SuiteOptions& o) {
  const OpRegistry& cat = OpRegistry::catalog();
  if (o.ops.empty()) return cat.all();
  return cat.match(o.ops);
}

// The kind of a sample: its label without dtype words ("transposed f16" -> "transposed").
std::string sample_kind(const std::string& label) {
  std::string out, word;
  auto flush = [&] {
    if (!word.empty() && !parse_dtype(word)) out += (out.empty() ? "" : " ") + word;
    word.clear();
  };
  for (char ch : label) {
    if (ch == ' ' || ch == ',') {
      flush();
    } else {
      word += ch;
    }
  }
  flush();
  return out;
}

// The smoke suite takes a spread of each op's samples: every kind of case (layouts, edge cases,
// special values, errors) in turn, rotating through the dtypes, up to `n` cases.
std::vector<Sample> smoke_pick(const std::vector<Sample>& all, int n) {
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<size_t>> by_kind;
  for (size_t i = 0; i < all.size(); ++i) {
    std::string k = sample_kind(all[i].label);
    if (!by_kind.count(k)) kinds.push_back(k);
    by_kind[k].push_back(i);
  }
  // Special values and must-raise cases first: they catch the most faults per case.
  auto priority = [](const std::string& k) {
    return k.find("special") != std::string::npos ? 0 : k.rfind("error", 0) == 0 ? 1 : 2;
  };
  std::stable_sort(kinds.begin(), kinds.end(), [&](const std::string& a, const std::string& b) {
    return priority(a) < priority(b);
  });
  std::vector<bool> taken(all.size(), false);
  std::vector<Sample> out;
  for (size_t round = 0; static_cast<int>(out.size()) < n; ++round) {
    bool any = false;
    for (size_t k = 0; k < kinds.size() && static_cast<int>(out.size()) < n; ++k) {
      const auto& idx = by_kind[kinds[k]];
      if (round >= idx.size()) continue;
      size_t pick = idx[(round + k) % idx.size()];
      if (taken[pick]) continue;
      taken[pick] = true;
      out.push_back(all[pick]);
      any = true;
    }
    if (!any) break;
  }
  return out;
}

// The distinct real-model calls of the shipped traces, read once per process.
const std::map<std::string, std::vector<cases::TraceEntry>>& shipped_calls() {
  static const auto calls = [] {
    const std::string dir = shipped_traces_dir();
    return dir.empty() ? std::map<std::string, std::vector<cases::TraceEntry>>()
                       : distinct_trace_calls(dir);
  }();
  return calls;
}

// The performance cases of an op: a handful of its distinct calls in the real-model traces
// (within the caps) where it occurs there, else the catalog's synthetic sizes, chosen large
// enough to be bandwidth- or compute-bound.
std::vector<SuiteCase> perf_cases(const SuiteOptions& o, const OpDef& op) {
  std::vector<SuiteCase> out;
  auto add = [&](cases::CallSpec call, std::string label, std::string source, int64_t cnt) {
    if (o.perf_dtype) retype_floating(call, *o.perf_dtype);
    if (!dtype_selected(o, call)) return;
    SuiteCase sc;
    sc.op = &op;
    sc.c.op = op.name;
    sc.c.call = std::move(call);
    sc.c.seed = o.seed;
    sc.c.label = std::move(label);
    sc.c.source = std::move(source);
    sc.c.cnt = cnt;
    sc.c.perf = true;
    out.push_back(std::move(sc));
  };
  const auto& calls = shipped_calls();
  if (auto it = calls.find(op.name); it != calls.end()) {
    std::vector<cases::TraceEntry> wanted;
    for (cases::TraceEntry e : it->second) {
      if (o.perf_dtype) retype_floating(e.call, *o.perf_dtype);
      if (dtype_selected(o, e.call)) wanted.push_back(std::move(e));
    }
    for (cases::TraceEntry& e :
         pick_perf_calls(op, wanted, o.max_numel, o.max_flops, kPerfTraceCallsPerOp))
      add(std::move(e.call), "perf: trace", fmt::format("{}:{}", e.file, e.line), e.cnt);
    if (!out.empty()) return out;
  }
  SampleContext pctx;
  pctx.performance = true;
  for (Sample& s : op.samples(pctx)) add(std::move(s.call), "perf: " + s.label, "opinfo-perf", 0);
  return out;
}

// smoke (a spread of each op's samples) or opinfo (all of them); `in`: only their forms in that
// dtype (opinfo:<dtype>, dtype_suite.h), an op without any reported unsupported with the reason.
std::vector<SuiteCase> catalog_suite(const SuiteOptions& o, bool smoke,
                                     std::optional<DType> in = std::nullopt) {
  std::vector<SuiteCase> out;
  for (const OpDef* op : selected_ops(o)) {
    SampleContext ctx;
    std::vector<Sample> samples = op->samples(ctx);
    // A CPU-only error is no must-raise case (a backend computing it as CUDA does is right).
    std::erase_if(samples, [](const Sample& s) { return s.cpu_only_error; });
    if (smoke) samples = smoke_pick(samples, o.smoke_per_op);
    if (in && !samples.empty()) {
      if (std::string why = samples_in_dtype(*op, samples, *in); !why.empty()) {
        // One case stands for the op, so that it counts (unsupported) instead of vanishing.
        SuiteCase sc;
        sc.op = op;
        sc.c.op = op->name;
        sc.c.call = samples.front().call;
        retype_floating(sc.c.call, *in);
        sc.c.seed = o.seed;
        sc.c.label = std::string(dtype_code(*in));
        sc.c.source = "opinfo";
        sc.unsupported_reason = std::move(why);
        out.push_back(std::move(sc));
        continue;
      }
    }
    for (Sample& s : samples) {
      if (!dtype_selected(o, s.call)) continue;
      SuiteCase sc;
      sc.op = op;
      sc.c.op = op->name;
      sc.c.call = std::move(s.call);
      sc.c.seed = o.seed;
      sc.c.label = s.label;
      sc.c.source = smoke ? "smoke" : "opinfo";
      sc.c.perf = smoke && o.perf;  // smoke cases are small: timed as they are
      out.push_back(std::move(sc));
    }
    if (!smoke && o.perf) {
      for (SuiteCase& sc : perf_cases(o, *op)) out.push_back(std::move(sc));
    }
  }
  return out;
}

// opinfo:<dtype>: --dtypes may only name the suite's dtype, and --perf's cases are timed in it.
std::vector<SuiteCase> opinfo_in_dtype(const SuiteOptions& given, const std::string& argument) {
  const DType t = suite_dtype("opinfo", argument);
  const std::string code(dtype_code(t));
  if (!given.dtypes.empty() && !given.dtypes.count(t))
    usage_error(fmt::format(
        "--dtypes selects no case of --suite {}: all its cases are {} (drop --dtypes, or run "
        "--suite opinfo --dtypes ...)",
        given.suite, code));
  if (given.perf_dtype && *given.perf_dtype != t)
    usage_error(fmt::format(
        "--perf-dtype {} contradicts --suite {}: its timed cases are {} too (drop --perf-dtype)",
        dtype_code(*given.perf_dtype), given.suite, code));
  SuiteOptions o = given;
  o.perf_dtype = t;
  return catalog_suite(o, false, t);
}

// The size by which --calls-per-op orders calls: FLOPs where the op has a model, else elements.
double call_work(const OpDef& op, const cases::CallSpec& call) {
  const CallSize size = call_size(&op, call);
  return std::max(size.flops, static_cast<double>(size.elements));
}

// --calls-per-op: per op (in order of first occurrence), its distinct calls (after --perf-dtype
// retyping and the dtype filter), of which `pick_perf_calls` keeps an even spread of sizes
// within the caps (an op with none within them keeps its smallest, reported skipped with the
// reason); an op outside the catalog keeps its first call (it is reported unsupported).
std::vector<cases::TraceEntry> calls_per_op(std::vector<cases::TraceEntry> entries,
                                            const SuiteOptions& o) {
  const OpRegistry& cat = OpRegistry::catalog();
  std::vector<std::string> order;
  std::map<std::string, std::vector<cases::TraceEntry>> by_op;
  std::set<std::pair<std::string, std::string>> seen;
  for (cases::TraceEntry& e : entries) {
    if (o.perf && o.perf_dtype) retype_floating(e.call, *o.perf_dtype);
    if (!dtype_selected(o, e.call)) continue;
    if (!seen.emplace(e.op, cases::print_call(e.call)).second) continue;
    if (!by_op.count(e.op)) order.push_back(e.op);
    by_op[e.op].push_back(std::move(e));
  }
  std::vector<cases::TraceEntry> out;
  for (const std::string& name : order) {
    std::vector<cases::TraceEntry>& calls = by_op[name];
    const OpDef* op = cat.find(name);
    if (!op) {
      out.push_back(std::move(calls.front()));
      continue;
    }
    std::vector<cases::TraceEntry> picked =
        pick_perf_calls(*op, calls, o.max_numel, o.max_flops, static_cast<size_t>(o.calls_per_op));
    if (picked.empty()) {
      // Every call is over the caps (or of a dtype the op lacks): the smallest is kept, so the
      // op stays in the denominators -- traces_suite records it skipped with the cap it
      // exceeds, or runs it when only its dtype kept it out.
      picked.push_back(std::move(*std::min_element(
          calls.begin(), calls.end(), [&](const cases::TraceEntry& a, const cases::TraceEntry& b) {
            return call_work(*op, a.call) < call_work(*op, b.call);
          })));
    }
    for (cases::TraceEntry& e : picked) out.push_back(std::move(e));
  }
  return out;
}

std::vector<SuiteCase> traces_suite(const SuiteOptions& o, const std::string& path) {
  if (path.empty()) usage_error("--suite traces: needs a path, e.g. --suite traces:data/traces");
  std::vector<cases::TraceEntry> entries = cases::read_traces(path);
  if (o.calls_per_op > 0) entries = calls_per_op(std::move(entries), o);
  const OpRegistry& cat = OpRegistry::catalog();
  std::vector<const OpDef*> wanted;
  if (!o.ops.empty()) wanted = cat.match(o.ops);
  std::vector<SuiteCase> out;
  for (cases::TraceEntry& e : entries) {
    const OpDef* op = cat.find(e.op);
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), op) == wanted.end()) continue;
    if (o.perf && o.perf_dtype && o.calls_per_op == 0) retype_floating(e.call, *o.perf_dtype);
    if (!dtype_selected(o, e.call)) continue;
    SuiteCase sc;
    sc.op = op;
    sc.c.op = e.op;
    sc.c.call = std::move(e.call);
    sc.c.seed = o.seed;
    sc.c.cnt = e.cnt;
    sc.c.label = "trace";
    sc.c.source = fmt::format("{}:{}", e.file, e.line);
    sc.c.perf = o.perf;
    const CallSize size = call_size(op, sc.c.call);
    if (o.max_numel > 0) {
      const int64_t n = size.elements;
      if (n > o.max_numel)
        sc.skip_reason = fmt::format(
            "{} elements exceed --max-numel {} (raise it, or 0 for no cap)", n, o.max_numel);
    }
    if (o.max_flops > 0 && sc.skip_reason.empty()) {
      const double f = size.flops;
      if (f > o.max_flops)
        sc.skip_reason = fmt::format(
            "about {:.3g} FLOPs exceed --max-flops {:.3g} (raise it, or 0 "
            "for no cap)",
            f, o.max_flops);
    }
    out.push_back(std::move(sc));
  }
  if (out.empty()) usage_error("--suite " + o.suite + ": no case matches the filters");
  return out;
}

std::vector<SuiteDef>& registry() {
  static std::vector<SuiteDef> defs = [] {
    std::vector<SuiteDef> d;
    d.push_back({.name = "smoke",
                 .argument = "",
                 .description = "a spread of every op's samples, 16 per op",
                 .build = [](const SuiteOptions& o, const std::string&) {
                   return catalog_suite(o, true);
                 }});
    d.push_back({.name = "opinfo",
                 .argument = "<dtype>",
                 .argument_optional = true,
                 .description = "every sample of every op (with --perf, the performance cases); "
                                "opinfo:<dtype> (bf16, f16, f32, f64): each op's samples in that "
                                "dtype, as BackendBench's default suite runs them",
                 .build = [](const SuiteOptions& o, const std::string& dtype) {
                   return dtype.empty() ? catalog_suite(o, false) : opinfo_in_dtype(o, dtype);
                 }});
    d.push_back({.name = "traces",
                 .argument = "<file or folder>",
                 .description = "every call of operator trace files (e.g. traces:data/traces)",
                 .build = [](const SuiteOptions& o, const std::string& path) {
                   return traces_suite(o, path);
                 }});
    d.push_back({.name = "opbyop",
                 .argument = "<graph file>",
                 .description = "every unique node of a model graph, alone, on its real inputs "
                                "(crucible opbyop adds the chained run and the reports)",
                 .build = [](const SuiteOptions& o, const std::string& path) {
                   return opbyop_suite(o, path);
                 }});
    d.push_back({.name = "model",
                 .argument = "<file or folder>",
                 .argument_optional = true,
                 .description = "whole model graphs, judged by the f64 arbiter (model: the "
                                "shipped tiny models; model:<path> your .graph files)",
                 .build = [](const SuiteOptions& o, const std::string& path) {
                   return model_suite(o, path);
                 }});
    return d;
  }();
  return defs;
}

std::string known_suites() {
  std::string s;
  for (const SuiteDef& d : registry())
    s += (s.empty() ? "" : ", ") + d.name +
         (d.argument.empty()
              ? ""
              : (d.argument_optional ? "[:" : ":") + d.argument + (d.argument_optional ? "]" : ""));
  return s;
}

}  // namespace

void register_suite(SuiteDef def) {
  for (const SuiteDef& d : registry())
    if (d.name == def.name) internal_error("suite registered twice: " + def.name);
  registry().push_back(std::move(def));
}

const std::vector<SuiteDef>& registered_suites() { return registry(); }

std::vector<SuiteCase> build_suite(const SuiteOptions& o) {
  const auto colon = o.suite.find(':');
  const std::string name = o.suite.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : o.suite.substr(colon + 1);
  const SuiteDef* def = nullptr;
  for (const SuiteDef& d : registry())
    if (d.name == name) def = &d;
  if (!def) usage_error("unknown suite '" + o.suite + "'; known: " + known_suites());
  if (!def->argument.empty() && argument.empty() && !def->argument_optional)
    usage_error(
        fmt::format("--suite {} needs an argument: --suite {}:{}", name, name, def->argument));
  if (!def->argument.empty() && argument.empty() && colon != std::string::npos)
    usage_error(fmt::format("--suite {}: nothing after ':'; give {}:{}{}", o.suite, name,
                            def->argument,
                            def->argument_optional ? " or --suite " + name + " alone" : ""));
  if (def->argument.empty() && colon != std::string::npos)
    usage_error(fmt::format("--suite {} takes no argument (got '{}')", name, o.suite));
  std::vector<SuiteCase> out = def->build(o, argument);
  if (out.empty()) usage_error("--suite " + o.suite + ": the filters select no case");
  return out;
}

}  // namespace crucible
