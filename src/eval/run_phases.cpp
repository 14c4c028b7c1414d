// The correctness and timing phases of a run, in isolated workers that create the run's backends
// once each.
#include "eval/run_phases.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/backends/backend.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/core/tensor.h"
#include "crucible/eval/evaluate.h"
#include "crucible/eval/gpus.h"
#include "crucible/eval/workers.h"
#include "eval/candidate_isolation.h"
#include "eval/progress.h"
#include "eval/run_folder.h"
#include "sandbox/sandbox.h"

namespace crucible {

using nlohmann::json;

namespace {

// A worker's report of case `id`: the JSON of a case result (or timing record) of that very
// case; anything else is a MalformedReport (the case's verdict, src/eval/workers.h).
json parse_report(const std::string& payload, const char* record, const std::string& id) {
  json j = json::parse(payload, nullptr, false);
  if (j.is_discarded()) throw MalformedReport("not JSON");
  if (!j.is_object() || !j.contains("record") || j["record"] != record)
    throw MalformedReport(fmt::format("not a {} record", record));
  if (!j.contains("case_id") || j["case_id"] != id)
    throw MalformedReport("a report of another case than " + id);
  return j;
}

CaseResult case_report(const std::string& payload, const std::string& id) {
  json j = parse_report(payload, "case", id);
  try {
    return case_result_from_json(j);
  } catch (const Error& e) {
    throw MalformedReport(e.what());
  }
}

TimingRecord timing_report(const std::string& payload, const std::string& id) {
  json j = parse_report(payload, "timing", id);
  try {
    return timing_record_from_json(j);
  } catch (const Error& e) {
    throw MalformedReport(e.what());
  }
}

std::string bytes_text(size_t n) {
  if (n >= (size_t{1} << 30) && n % (size_t{1} << 30) == 0) return fmt::format("{}G", n >> 30);
  if (n >= (size_t{1} << 20) && n % (size_t{1} << 20) == 0) return fmt::format("{}M", n >> 20);
  return fmt::format("{} bytes", n);
}

// Which memory limit an allocation met: crucible's own count of the worker's tensors against
// --memory-limit, or the worker's data limit (RLIMIT_DATA: --memory-limit plus head-room).
std::string memory_limit_detail(const std::string& what, size_t limit) {
  if (what.find("exceeds the memory limit") != std::string::npos)
    return fmt::format(
        "the worker's tensors (the inputs, their copies and the outputs together) would exceed "
        "--memory-limit {}: {}",
        bytes_text(limit), what);
  if (limit == 0) return "the machine is out of memory: " + what;
  return fmt::format(
      "the worker's data limit (what it held at its start + --memory-limit {} + 512M for stacks "
      "and the allocator) was reached: {}",
      bytes_text(limit), what);
}

// The machine's load now.
LoadSample sample_load() {
  LoadSample l;
  std::ifstream la("/proc/loadavg");
  if (!(la >> l.loadavg)) l.loadavg = -1;
  std::ifstream st("/proc/stat");
  std::string key;
  while (st >> key) {
    if (key == "procs_running") {
      st >> l.running;
      break;
    }
    st.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return l;
}

// A case result of `sc` without a verdict yet.
CaseResult base_result(const SuiteCase& sc) {
  CaseResult r;
  r.case_id = sc.c.id();
  r.op = sc.c.op;
  r.call = cases::print_call(sc.c.call);
  r.label = sc.c.label;
  r.source = sc.c.source;
  r.seed = sc.c.seed;
  r.cnt = sc.c.cnt;
  if (auto d = primary_dtype(sc.c.call)) r.dtype = std::string(dtype_code(*d));
  return r;
}

// The command that re-runs `sc` on the candidate.
std::string reproducer_of(const SuiteCase& sc, const std::string& backend) {
  return sc.reproducer ? sc.reproducer(backend) : sc.c.reproducer(backend);
}

// Appends a decided case (or timing) to results.jsonl and keeps it.
void record(const RunPlan& plan, RunRecords& records, CaseResult r) {
  plan.results_file->append(to_json(r));
  records.results.push_back(std::move(r));
}

void record(const RunPlan& plan, RunRecords& records, TimingRecord t) {
  plan.results_file->append(to_json(t));
  records.timings.push_back(std::move(t));
}

// Backends a worker creates once, after it is forked (plugins never load in this process).
struct WorkerBackends {
  std::unique_ptr<Backend> reference, candidate, baseline;
};

// The options of a phase's workers: each creates the plan's backends in `wb` as it starts. Each
// case gets --timeout (times `timeout_factor`) plus its size's allowance.
WorkerOptions worker_options(const RunPlan& plan, WorkerBackends* wb, int workers, int threads,
                             double timeout_factor, PoolTrace* trace) {
  const double timeout_s = plan.options.timeout_s * timeout_factor;
  const RunOptions& ro = plan.options;
  std::vector<std::string> names = {ro.reference, ro.backend};
  if (ro.perf) names.push_back(ro.baseline);
  BackendRegistry::instance().prepare(names);  // here, in the parent: the workers inherit it
  WorkerOptions wo;
  wo.workers = workers;
  wo.timeout_s = timeout_s;
  auto allowance = std::make_shared<std::vector<double>>(plan.cases.size(), -1.0);
  wo.allowance_s = [&plan, allowance, timeout_factor](size_t i) {
    if (i >= allowance->size()) return 0.0;
    double& a = (*allowance)[i];  // computed once a case, as it first starts
    if (a < 0) a = size_allowance_s(plan.cases[i]);
    return a * timeout_factor;
  };
  wo.memory_limit = plan.options.memory_limit;
  wo.trace = trace;
  wo.on_worker_start = [&plan, wb, threads] {
    assign_worker_gpu(plan.gpus, worker_slot());  // before anything here can start CUDA
    const RunOptions& o = plan.options;
    set_allocation_limit(o.memory_limit);
    wb->reference = BackendRegistry::instance().create(o.reference);
    wb->candidate = BackendRegistry::instance().create(o.backend);
    if (o.perf) wb->baseline = BackendRegistry::instance().create(o.baseline);
    // Kernels from outside run in candidate processes of their own, sandboxed; this worker
    // (which judges) never loads them.
    const CandidateIsolation iso =
        worker_candidate_isolation(plan.sandboxed ? plan.sandbox.get() : nullptr);
    // Every backend is isolated before any is told its thread count: a candidate zygote forks
    // from this worker as created, before an aten reference or baseline starts libtorch's thread
    // pools here. (With an aten:cuda reference set up first, the children of a zygote that had
    // imported PyTorch started with 64 threads on a 64-core GPU host, and no sandbox could be
    // entered.)
    for (Backend* b : {wb->reference.get(), wb->candidate.get(), wb->baseline.get()})
      if (b) b->isolate_candidates(iso);
    for (Backend* b : {wb->reference.get(), wb->candidate.get(), wb->baseline.get()})
      if (b) b->set_num_threads(threads);
    // A device backend's context is created here, as part of the worker's start, not in its
    // first case (the run's profile shows it where it belongs); where it cannot start, the
    // first case meets the error and says it.
    for (Backend* b : {wb->reference.get(), wb->candidate.get(), wb->baseline.get()})
      if (b && !b->device().is_cpu()) try {
          b->synchronize();
        } catch (const std::exception&) {
        }
  };
  return wo;
}

// Evaluates case `sc` in a worker. An error that escapes the evaluation (an input copy over the
// memory limit, ...) is this case's verdict, never the worker's end.
CaseResult evaluate_in_worker(const RunPlan& plan, const SuiteCase& sc, WorkerBackends& wb) {
  const RunOptions& o = plan.options;
  CaseResult r;
  try {
    if (sc.evaluate)
      r = sc.evaluate(*wb.reference, *wb.candidate);
    else if (sc.inputs)
      r = evaluate_case_with_inputs(sc.c, *sc.op, *sc.inputs, *wb.reference, *wb.candidate);
    else
      r = evaluate_case(sc.c, *sc.op, *wb.reference, *wb.candidate);
  } catch (const Error& e) {
    r = base_result(sc);
    r.status = e.kind() == ErrorKind::Memory        ? Status::MemoryLimit
               : e.kind() == ErrorKind::Unsupported ? Status::Unsupported
                                                    : Status::Crashed;
    r.detail = e.kind() == ErrorKind::Memory ? memory_limit_detail(e.what(), o.memory_limit)
               : r.status == Status::Crashed
                   ? std::string("the evaluation stopped on an error: ") + e.what()
                   : std::string(e.what());
  } catch (const std::bad_alloc&) {
    r = base_result(sc);
    r.status = Status::MemoryLimit;
    r.detail = memory_limit_detail("allocation failed (std::bad_alloc)", o.memory_limit);
  } catch (const std::exception& e) {
    r = base_result(sc);
    r.status = Status::Crashed;
    r.detail = std::string("the evaluation stopped on an error: ") + e.what();
  }
  if (r.status != Status::Passed) r.reproducer = reproducer_of(sc, o.backend);
  return r;
}

}  // namespace

double size_allowance_s(const SuiteCase& sc) {
  if (sc.op == nullptr || sc.evaluate) return 0;
  const CallSize size = call_size(sc.op, sc.c.call);
  return std::floor(static_cast<double>(size.elements) * 1e-6 + size.flops * 1e-10);
}

void run_correctness(const RunPlan& plan, RunRecords& records, PoolTrace* trace) {
  const RunOptions& o = plan.options;
  const std::vector<SuiteCase>& cases = plan.cases;

  // Cases decided without running anything.
  std::set<std::string> done_cases = plan.done_cases;
  std::vector<size_t> to_run;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SuiteCase& sc = cases[i];
    std::string id = sc.c.id();
    if (done_cases.count(id)) continue;
    done_cases.insert(id);  // a suite may hold the same case twice: run it once
    if (!sc.skip_reason.empty()) {
      CaseResult r = base_result(sc);
      r.status = Status::Skipped;
      r.detail = sc.skip_reason;
      record(plan, records, std::move(r));
    } else if ((!sc.op && !sc.evaluate) || !sc.unsupported_reason.empty()) {
      CaseResult r = base_result(sc);
      r.status = Status::Unsupported;
      r.detail = sc.op ? sc.unsupported_reason : "the op is not in crucible's catalog";
      record(plan, records, std::move(r));
    } else {
      to_run.push_back(i);
    }
  }

  // The others in parallel isolated workers.
  auto wb = std::make_unique<WorkerBackends>();  // filled in each worker after fork
  const int workers =
      std::min<int>(o.workers, static_cast<int>(std::max<size_t>(1, to_run.size())));
  Progress progress("correctness", to_run.size(), o.progress);
  WorkerPool pool(
      worker_options(plan, wb.get(), workers,
                     correctness_threads(o.threads, online_cores(), workers), 1.0, trace),
      [&](size_t i) {
        sandbox_job_started();
        CaseResult r = evaluate_in_worker(plan, cases[i], *wb);
        return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
      });
  pool.run(
      to_run,
      [&](size_t i, const std::string& payload) {
        // Validated (a malformed report is the case's verdict) and written as crucible
        // serialises it, never as the worker's bytes.
        CaseResult r = case_report(payload, cases[i].c.id());
        progress.add(r.status == Status::Passed);
        record(plan, records, std::move(r));
      },
      [&](size_t i, const JobFailure& f) {
        CaseResult r = base_result(cases[i]);
        r.status = f.kind == JobFailure::Kind::TimedOut ? Status::TimedOut : Status::Crashed;
        r.detail = f.detail;
        if (plan.sandboxed && f.signal == SIGSYS && f.detail.find("sandbox:") == std::string::npos)
          r.detail += ": " + sandbox_unexplained_sigsys();
        r.reproducer = reproducer_of(cases[i], o.backend);
        progress.add(false);
        record(plan, records, std::move(r));
      });
  progress.finish();
}

TimingLoad run_timing(const RunPlan& plan, RunRecords& records, PoolTrace* trace) {
  const RunOptions& o = plan.options;
  const std::vector<SuiteCase>& cases = plan.cases;
  TimingLoad load;
  if (!o.perf) return load;
  load.before = sample_load();

  // The cases that passed (not by raising the expected error), once each.
  std::map<std::string, const CaseResult*> by_id;
  for (const CaseResult& r : records.results) by_id[r.case_id] = &r;
  std::set<std::string> done_timings = plan.done_timings;
  std::vector<size_t> to_time;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SuiteCase& sc = cases[i];
    if (!sc.c.perf || !sc.op) continue;
    std::string id = sc.c.id();
    auto it = by_id.find(id);
    if (it == by_id.end() || it->second->status != Status::Passed || it->second->expected_error)
      continue;
    if (done_timings.count(id)) continue;
    done_timings.insert(id);
    to_time.push_back(i);
  }

  auto wb = std::make_unique<WorkerBackends>();  // filled in each worker after fork
  TimingOptions topts;
  topts.cold_cache = o.cold_cache;
  Progress progress("timing", to_time.size(), o.progress);
  auto time_one = [&](size_t i) {
    sandbox_job_started();
    const SuiteCase& sc = cases[i];
    TimingRecord t;
    try {
      t = time_case(sc.c, *sc.op, *wb->candidate, *wb->baseline, topts);
    } catch (const std::exception& e) {
      t = TimingRecord{};
      t.case_id = sc.c.id();
      t.op = sc.c.op;
      t.call = cases::print_call(sc.c.call);
      t.error = std::string("timing stopped on an error: ") + e.what();
    }
    return to_json(t).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  WorkerPool pool(worker_options(plan, wb.get(), plan.timing_workers, o.threads, 4.0, trace),
                  time_one);
  pool.run(
      to_time,
      [&](size_t i, const std::string& payload) {
        TimingRecord t = timing_report(payload, cases[i].c.id());
        progress.add(t.error.empty());
        record(plan, records, std::move(t));
      },
      [&](size_t i, const JobFailure& f) {
        TimingRecord t;
        t.case_id = cases[i].c.id();
        t.op = cases[i].c.op;
        t.call = cases::print_call(cases[i].c.call);
        t.error = f.detail;
        assess_timing(t);
        progress.add(false);
        record(plan, records, std::move(t));
      });
  progress.finish();
  load.after = sample_load();
  return load;
}

}  // namespace crucible
