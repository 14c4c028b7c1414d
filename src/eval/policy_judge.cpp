// A kernel policy's judged step in a worker process (see policy_judge.h).
#include "eval/policy_judge.h"

#include <csignal>
#include <memory>
#include <new>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/core/tensor.h"
#include "crucible/eval/workers.h"
#include "eval/candidate_isolation.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace {

using json = nlohmann::json;

std::string limit_text(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

PolicyJudgeResult judge_policy_isolated(const graph::Graph& g,
                                        const std::vector<models::OpChoice>& choices,
                                        const std::vector<std::string>& backends,
                                        const ModelJudgeOptions& options,
                                        const PolicyJudgeOptions& isolation, CaseResult base) {
  // Made once here (a kernel folder compiles, a plugin is probed, a bad choice is refused),
  // then again in the worker.
  const models::PolicyBackend probe(choices, backends);
  std::unique_ptr<ScratchRoot> scratch;
  std::unique_ptr<SandboxOptions> sandbox;
  if (probe.untrusted() && isolation.sandbox) {
    scratch = std::make_unique<ScratchRoot>();
    sandbox = std::make_unique<SandboxOptions>();
    sandbox->scratch_root = scratch->path();
    sandbox->cpu_seconds_per_job =
        4 * isolation.timeout_s * std::max(1u, std::thread::hardware_concurrency()) + 1;
    const std::string why = probe_sandbox(*sandbox);
    if (!why.empty())
      usage_error("the sandbox for untrusted kernels cannot be set up on this machine: " + why);
  }

  std::unique_ptr<models::PolicyBackend> backend;  // the worker's, made after the fork
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = isolation.timeout_s;
  wo.memory_limit = isolation.memory_limit;
  wo.max_batch = 1;
  wo.on_worker_start = [&] {
    set_allocation_limit(isolation.memory_limit);
    backend = std::make_unique<models::PolicyBackend>(choices, backends);
    const CandidateIsolation iso = worker_candidate_isolation(sandbox.get());
    backend->isolate_candidates(iso);
  };
  WorkerPool pool(wo, [&](size_t) {
    sandbox_job_started();
    CaseResult r = base;
    try {
      judge_model(g, *backend, options, r);
    } catch (const Error& e) {
      r = base;
      r.status = e.kind() == ErrorKind::Memory ? Status::MemoryLimit : Status::Crashed;
      r.detail =
          e.kind() == ErrorKind::Memory
              ? fmt::format("{} (the limit: {})", e.what(), limit_text(isolation.memory_limit))
              : std::string("the evaluation stopped on an error: ") + e.what();
    } catch (const std::bad_alloc&) {
      r = base;
      r.status = Status::MemoryLimit;
      r.detail = fmt::format("allocation failed (std::bad_alloc; the limit: {})",
                             limit_text(isolation.memory_limit));
    }
    json ran = json::object();
    for (const auto& [op, bc] : backend->ran()) ran[op] = {bc.first, bc.second};
    json report = {{"result", to_json(r)}, {"ran", ran}};
    return report.dump(-1, ' ', false, json::error_handler_t::replace);
  });

  PolicyJudgeResult out;
  out.result = base;
  out.result.status = Status::Crashed;
  out.result.detail = "the worker reported nothing";
  pool.run(
      {0},
      [&](size_t, const std::string& payload) {
        // The worker's bytes are checked before they are believed.
        const json j = json::parse(payload, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("result") || !j.contains("ran") ||
            !j["ran"].is_object())
          throw MalformedReport("not a report of the judged step");
        CaseResult r;
        try {
          r = case_result_from_json(j["result"]);
        } catch (const Error& e) {
          throw MalformedReport(e.what());
        }
        if (r.case_id != base.case_id) throw MalformedReport("a report of another case");
        std::map<std::string, std::pair<std::string, int64_t>> ran;
        for (const auto& [op, v] : j["ran"].items()) {
          if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer())
            throw MalformedReport("a malformed count of " + op);
          ran[op] = {v[0].get<std::string>(), v[1].get<int64_t>()};
        }
        out.result = std::move(r);
        out.ran = std::move(ran);
      },
      [&](size_t, const JobFailure& f) {
        out.result = base;
        out.result.status =
            f.kind == JobFailure::Kind::TimedOut ? Status::TimedOut : Status::Crashed;
        out.result.detail = f.detail;
        if (sandbox && f.signal == SIGSYS && f.detail.find("sandbox:") == std::string::npos)
          out.result.detail += ": " + sandbox_unexplained_sigsys();
      });
  return out;
}

}  // namespace crucible
