// Kernel policies (see kernel_policy.h).
#include "crucible/models/kernel_policy.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/node_inputs.h"

namespace crucible::models {

namespace {

using Json = nlohmann::json;

Json read_cache(const std::string& path) {
  if (path.empty() || !std::filesystem::exists(path)) return Json::object();
  std::ifstream in(path);
  try {
    Json j = Json::parse(in);
    if (j.is_object()) return j;
  } catch (const Json::exception&) {
  }
  input_error(path, "is not a kernel-policy cache (a JSON object); delete it to start afresh");
}

std::vector<Tensor> tensors_of(const Values& vs) {
  std::vector<Tensor> out;
  for (const Value& v : vs) {
    if (v.kind() == ValueKind::Tensor)
      out.push_back(v.tensor());
    else if (v.kind() == ValueKind::None)
      out.emplace_back();
    else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
      for (const Tensor& t : v.tensors()) out.push_back(t);
  }
  return out;
}

// Runs every node of `op` alone on `b` with its real inputs; the best of three timings of all
// of them, or why the backend is not a candidate.
std::optional<double> try_backend(const graph::Graph& g, const OpDef& def, Backend& b,
                                  const graph::TensorMap& values, std::string& why) {
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 3; ++rep) {
    double total = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const graph::Node& n = g.nodes[i];
      if (n.op != def.name) continue;
      const Values args = deep_copy(graph::node_inputs(g, i, values));
      std::string w;
      if (!b.supports(def, args, &w)) {
        why = "does not support the call at line " + std::to_string(n.line) +
              (w.empty() ? "" : ": " + w);
        return std::nullopt;
      }
      std::vector<Tensor> outs;
      try {
        const auto t0 = std::chrono::steady_clock::now();
        outs = tensors_of(b.run(def, args));
        b.synchronize();
        total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Internal) throw;
        why = "raised at line " + std::to_string(n.line) + ": " + e.what();
        return std::nullopt;
      }
      if (rep > 0) continue;
      for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k) {
        const auto it = values.find(n.outputs[k]);
        if (n.outputs[k] == "_" || it == values.end() || !it->second.defined()) continue;
        const Tensor got = b.to_host(outs[k]);
        if (got.shape() != it->second.shape() || got.dtype() != it->second.dtype()) {
          why = "wrong shape or dtype at line " + std::to_string(n.line);
          return std::nullopt;
        }
        const TensorCheck c = compare_tensors(it->second, got, 16, "%" + n.outputs[k]);
        if (!c.passed) {
          why = "wrong at line " + std::to_string(n.line) + ": " + c.reason;
          return std::nullopt;
        }
      }
    }
    best = std::min(best, total);
  }
  return best;
}

}  // namespace

void run_trial(const graph::Graph& g, Backend& b, const graph::TensorMap& values, Trial& t) {
  std::string why;
  if (auto s = try_backend(g, OpRegistry::catalog().get(t.op), b, values, why))
    t.seconds = *s;
  else
    t.why = why;
}

std::vector<OpChoice> choose_kernels(const graph::Graph& g, const KernelPolicy& policy,
                                     uint64_t seed, const TrialRunner& run_trials) {
  if (policy.backends.empty()) usage_error("a kernel policy needs at least one backend");
  std::map<std::string, std::unique_ptr<Backend>> backends;
  for (const std::string& name : policy.backends)
    backends.emplace(name, BackendRegistry::instance().create(name));
  for (const auto& [op, b] : policy.force) {
    if (!backends.contains(b))
      usage_error("force " + op + "=" + b + ": " + b + " is not one of the policy's backends");
    if (!OpRegistry::catalog().find(op)) usage_error("force " + op + ": not a catalog op");
  }
  Json cache = read_cache(policy.cache);
  const std::string all = fmt::format("{}", fmt::join(policy.backends, ","));
  const auto key_of = [&](const std::string& op) { return g.name + "|" + op + "|" + all; };
  const auto cached = [&](const std::string& op) {
    const std::string key = key_of(op);
    return cache.contains(key) && cache[key].is_string() &&
           backends.contains(cache[key].get<std::string>());
  };
  // fastest: every trial the choices need, run in a worker on a ref run's real values.
  std::vector<Trial> trials;
  if (policy.fastest) {
    for (const std::string& op : g.ops_used()) {
      if (policy.force.contains(op) || cached(op)) continue;
      for (const std::string& b : policy.backends)
        if (backends.at(b)->has_op(OpRegistry::catalog().get(op))) trials.push_back({op, b});
    }
    if (!trials.empty()) {
      graph::ExecOptions o{.seed = seed};
      o.keep_values = true;
      const graph::ExecResult ref_run = graph::execute(g, "ref", o);
      run_trials(g, ref_run.values, trials);
    }
  }
  std::vector<OpChoice> out;
  for (const std::string& op : g.ops_used()) {
    const OpDef& def = OpRegistry::catalog().get(op);
    OpChoice c;
    c.op = op;
    if (auto it = policy.force.find(op); it != policy.force.end()) {
      c.backend = it->second;
      c.why = "forced";
    } else if (!policy.fastest) {
      for (const std::string& b : policy.backends) {
        if (backends.at(b)->has_op(def)) {
          c.backend = b;
          c.why = "first backend with the op";
          break;
        }
        c.rejected[b] = "does not implement it";
      }
    } else if (cached(op)) {
      c.backend = cache[key_of(op)].get<std::string>();
      c.why = "fastest (cached in " + policy.cache + ")";
    } else {
      for (const std::string& b : policy.backends)
        if (!backends.at(b)->has_op(def)) c.rejected[b] = "does not implement it";
      for (const Trial& t : trials) {
        if (t.op != op) continue;
        if (t.seconds)
          c.seconds[t.backend] = *t.seconds;
        else
          c.rejected[t.backend] = t.why;
      }
      double best = std::numeric_limits<double>::infinity();
      for (const auto& [b, s] : c.seconds)
        if (s < best) {
          best = s;
          c.backend = b;
        }
      c.why = fmt::format("fastest of {} correct backend(s)", c.seconds.size());
      if (!c.backend.empty()) cache[key_of(op)] = c.backend;
    }
    if (c.backend.empty()) {
      std::string why;
      for (const auto& [b, w] : c.rejected) why += fmt::format("; {}: {}", b, w);
      unsupported("kernel policy: no backend runs " + op + why);
    }
    out.push_back(std::move(c));
  }
  if (!policy.cache.empty() && policy.fastest) {
    std::ofstream o(policy.cache);
    o << cache.dump(2) << "\n";
    if (!o) input_error(policy.cache, "cannot be written");
  }
  return out;
}

PolicyBackend::PolicyBackend(const std::vector<OpChoice>& choices,
                             const std::vector<std::string>& backends) {
  for (const std::string& b : backends) backends_.emplace(b, BackendRegistry::instance().create(b));
  for (const OpChoice& c : choices) {
    if (!backends_.contains(c.backend))
      usage_error("policy: " + c.op + " is assigned to " + c.backend + ", not a given backend");
    choice_[c.op] = c.backend;
  }
}

bool PolicyBackend::untrusted() const {
  for (const auto& [name, b] : backends_)
    if (b->untrusted()) return true;
  return false;
}

void PolicyBackend::isolate_candidates(const CandidateIsolation& isolation) {
  for (auto& [name, b] : backends_) b->isolate_candidates(isolation);
}

Backend& PolicyBackend::of(const std::string& op) const {
  const auto it = choice_.find(op);
  if (it == choice_.end()) unsupported("policy: no backend chosen for " + op);
  return *backends_.at(it->second);
}

bool PolicyBackend::supports(const OpDef& op, const Values& args, std::string* why) const {
  if (!choice_.contains(op.name)) {
    if (why) *why = "no backend chosen for " + op.name;
    return false;
  }
  return of(op.name).supports(op, args, why);
}

Values PolicyBackend::run(const OpDef& op, const Values& args) {
  auto& [backend, calls] = ran_[op.name];
  backend = choice_.at(op.name);
  ++calls;
  return of(op.name).run(op, args);
}

void PolicyBackend::manual_seed(uint64_t seed) {
  Backend::manual_seed(seed);
  for (auto& [name, b] : backends_) b->manual_seed(seed);
}

}  // namespace crucible::models
