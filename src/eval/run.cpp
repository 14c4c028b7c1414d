// A run from start to finish: suite -> isolated evaluation -> timing -> run folder.
#include "crucible/eval/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/backends/backend.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/eval/calibrate.h"
#include "crucible/eval/evaluate.h"
#include "crucible/eval/workers.h"
#include "crucible/report/atomic_file.h"
#include "crucible/report/manifest.h"
#include "crucible/report/summary.h"
#include "eval/progress.h"
#include "sandbox/death_note.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string default_out_dir(const RunOptions& o) {
  std::string suite = o.suite.suite;
  for (char& c : suite)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  std::string backend = o.backend;
  for (char& c : backend)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/{}-{}-{}-{}", suite, backend, stamp, getpid());
}

void prepare_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) input_error("--out " + dir, "cannot create the run folder: " + ec.message());
  std::string probe = dir + "/.crucible-write-test";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    input_error("--out " + dir,
                std::string("the run folder is not writable: ") + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

// Appends lines to results.jsonl with one write() each, so a killed run loses no finished line.
class ResultsFile {
 public:
  explicit ResultsFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) input_error(path, std::string("cannot open for writing: ") + std::strerror(errno));
  }
  ~ResultsFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  void append(const json& j) {
    append_line(j.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  // Appends one line (a JSON object without the newline) with a single write.
  void append_line(std::string line) {
    line += '\n';
    const char* p = line.data();
    size_t n = line.size();
    while (n > 0) {
      ssize_t k = ::write(fd_, p, n);
      if (k < 0) {
        if (errno == EINTR) continue;
        input_error(path_, std::string("write failed: ") + std::strerror(errno));
      }
      p += k;
      n -= static_cast<size_t>(k);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// The run folder's lock: held (flock on <folder>/.lock) from before the folder is read until
// the run ends, so two runs or resumes of one folder cannot interleave their lines.
class RunFolderLock {
 public:
  explicit RunFolderLock(const std::string& dir) {
    const std::string path = dir + "/.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      input_error(path, std::string("cannot open the run folder's lock: ") + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      ::close(fd_);
      if (e == EWOULDBLOCK)
        usage_error("the run folder " + dir + " is in use by another crucible run (its lock, " +
                    path + ", is held); wait for that run to end or choose another --out");
      input_error(path, std::string("cannot lock the run folder: ") + std::strerror(e));
    }
  }
  ~RunFolderLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Reads the results of an earlier (possibly killed) run. Every line must be a case or timing
// record of a case of this run (`ops_of_case`: case id -> op); anything else is refused with
// its file:line. The only damage tolerated is a torn last line (no newline), which is cut off.
// A case recorded more than once counts once (the first record).
void load_previous(const std::string& path, const std::map<std::string, std::string>& ops_of_case,
                   std::vector<CaseResult>& results, std::vector<TimingRecord>& timings) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  if (!fs::is_regular_file(path, ec))
    input_error(path, "not a regular file (a run folder's results.jsonl is a file of JSON lines)");
  std::ifstream f(path);
  if (!f) input_error(path, std::string("cannot read: ") + std::strerror(errno));
  std::string line;
  std::streamoff good_end = 0;
  int lineno = 0;
  std::set<std::string> seen_cases, seen_timings;
  size_t duplicates = 0;
  while (std::getline(f, line)) {
    ++lineno;
    const bool complete = !f.eof();  // ended by a newline
    if (!complete) break;            // a torn last line from a killed run: cut off below
    const std::string where = fmt::format("{}:{}", path, lineno);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) input_error(where, "not a JSON line; the file is damaged");
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string())
      input_error(where, "not a crucible record (no \"record\": \"case\" or \"timing\")");
    const std::string kind = j["record"].get<std::string>();
    if (kind != "case" && kind != "timing")
      input_error(where, "unknown record \"" + kind + "\" (expected \"case\" or \"timing\")");
    // A field of the wrong type, a missing field, an unknown status: refused with the place.
    auto read = [&](auto from_json) {
      try {
        return from_json(j);
      } catch (const Error& e) {
        input_error(where, e.what());
      }
    };
    if (kind == "case") {
      CaseResult r = read(case_result_from_json);
      auto it = ops_of_case.find(r.case_id);
      if (it == ops_of_case.end())
        input_error(where, "case " + r.case_id +
                               " is not a case of this run (its suite, ops and dtypes); the "
                               "file belongs to another run");
      if (it->second != r.op)
        input_error(where,
                    "case " + r.case_id + " is a case of " + it->second + ", not of " + r.op);
      if (seen_cases.insert(r.case_id).second)
        results.push_back(std::move(r));
      else
        ++duplicates;
    } else {
      TimingRecord t = read(timing_record_from_json);
      if (!ops_of_case.count(t.case_id))
        input_error(where, "timing of case " + t.case_id +
                               ", which is not a case of this run; the file belongs to another "
                               "run");
      if (seen_timings.insert(t.case_id).second)
        timings.push_back(std::move(t));
      else
        ++duplicates;
    }
    good_end = f.tellg();
  }
  if (duplicates > 0)
    fmt::print(stderr,
               "crucible: note: {}: {} duplicate record(s) ignored (each case counts once)\n", path,
               duplicates);
  if (static_cast<std::streamoff>(fs::file_size(path, ec)) > good_end && !ec)
    fs::resize_file(path, static_cast<uintmax_t>(good_end), ec);
}

json options_json(const RunOptions& o) {
  json dtypes = json::array();
  for (DType d : o.suite.dtypes) dtypes.push_back(std::string(dtype_code(d)));
  return {{"suite", o.suite.suite},
          {"backend", o.backend},
          {"reference", o.reference},
          {"baseline", o.baseline},
          {"perf", o.perf},
          {"cold_cache", o.cold_cache},
          {"ops", o.suite.ops},
          {"dtypes", dtypes},
          {"seed", o.suite.seed},
          {"workers", o.workers},
          {"threads", o.threads},
          {"timeout_s", o.timeout_s},
          {"memory_limit", o.memory_limit},
          {"max_numel", o.suite.max_numel},
          {"max_flops", o.suite.max_flops},
          {"perf_dtype",
           o.suite.perf_dtype ? json(std::string(dtype_code(*o.suite.perf_dtype))) : json(nullptr)},
          {"calls_per_op", o.suite.calls_per_op},
          {"p", o.p}};
}

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
// --memory-limit, or the worker's address-space limit (--memory-limit plus head-room).
std::string memory_limit_detail(const std::string& what, size_t limit) {
  if (what.find("exceeds the memory limit") != std::string::npos)
    return fmt::format(
        "the worker's tensors (the inputs, their copies and the outputs together) would exceed "
        "--memory-limit {}: {}",
        bytes_text(limit), what);
  if (limit == 0) return "the machine is out of memory: " + what;
  return fmt::format(
      "the worker's address-space limit ({} = --memory-limit {} + 512M for code, stacks and "
      "the allocator) was reached: {}",
      bytes_text(limit + (size_t{512} << 20)), bytes_text(limit), what);
}

// The machine's load: the 1-minute load average and the tasks runnable right now.
struct LoadSample {
  double loadavg = -1;
  int running = -1;
};

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

// Backends a worker creates once, after it is forked (plugins never load in this process).
struct WorkerBackends {
  std::unique_ptr<Backend> reference, candidate, baseline;
};

}  // namespace

int run(const RunOptions& in) {
  RunOptions o = in;
  auto t_start = std::chrono::steady_clock::now();
  BackendRegistry& reg = BackendRegistry::instance();
  if (o.backend.empty()) o.backend = reg.default_backend();
  if (o.baseline.empty()) o.baseline = o.reference;
  if (o.workers <= 0) o.workers = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));

  // Validate backend names before any work (creating a built-in backend has no side effects).
  std::vector<BackendInfo> infos;
  bool untrusted = false;
  for (auto [role, spec] : {std::pair<std::string, std::string>{"candidate", o.backend},
                            {"reference", o.reference},
                            {"baseline", o.baseline}}) {
    if (role == "baseline" && !o.perf) continue;
    auto b = reg.create(spec);
    infos.push_back({role, b->name(), b->version(), b->device().str()});
    untrusted = untrusted || b->untrusted() || spec.starts_with("plugin:");
  }
  // Untrusted kernels run in sandboxed workers; check here that the sandbox can be entered.
  std::optional<ScratchRoot> scratch;
  SandboxOptions sandbox;
  const bool sandboxed = untrusted && o.sandbox;
  if (sandboxed) {
    scratch.emplace();
    sandbox.scratch_root = scratch->path();
    sandbox.cpu_seconds_per_job =
        4 * o.timeout_s * static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))) + 1;
    std::string why = probe_sandbox(sandbox);
    if (!why.empty())
      usage_error("the sandbox for untrusted kernels cannot be set up on this machine: " + why +
                  "; --no-sandbox runs them without it (only for kernels you trust)");
  }

  // The cases.
  std::vector<SuiteCase> cases;
  if (!o.single_op.empty() || !o.single_case.empty()) {
    SuiteCase sc;
    sc.op = &OpRegistry::catalog().get(o.single_op);
    sc.c.op = sc.op->name;
    sc.c.call = cases::parse_call(o.single_case, "--case");
    sc.c.seed = o.suite.seed;
    sc.c.label = "single";
    sc.c.source = "--case";
    sc.c.perf = o.perf;
    cases.push_back(std::move(sc));
    o.suite.suite = "case";
  } else {
    o.suite.perf = o.perf;
    try {
      cases = build_suite(o.suite);
    } catch (const Error& e) {
      // A trace file or folder without a single case is that, whatever the filters.
      if (o.suite.suite.starts_with("traces:") &&
          std::string(e.what()).find("no case matches") != std::string::npos) {
        const std::string path = o.suite.suite.substr(7);
        if (cases::read_traces(path).empty())
          input_error("--suite " + o.suite.suite, "no cases in " + path);
      }
      throw;
    }
  }

  // The run folder, locked for the whole run.
  if (!o.resume.empty()) o.out = o.resume;
  if (o.out.empty()) o.out = default_out_dir(o);
  prepare_out_dir(o.out);
  RunFolderLock lock(o.out);
  const std::string results_path = o.out + "/results.jsonl";
  std::vector<CaseResult> results;
  std::vector<TimingRecord> timings;
  if (!o.resume.empty()) {
    std::map<std::string, std::string> ops_of_case;
    for (const SuiteCase& sc : cases) ops_of_case.emplace(sc.c.id(), sc.c.op);
    load_previous(results_path, ops_of_case, results, timings);
  } else if (std::error_code ec; fs::exists(results_path, ec)) {
    if (!fs::is_regular_file(results_path, ec))
      input_error(results_path, "not a regular file; choose another --out");
    if (fs::file_size(results_path, ec) > 0)
      usage_error("--out " + o.out + " already holds results.jsonl; use --resume " + o.out +
                  " to continue that run, or choose another --out");
  }
  MachinePeaks peaks;  // --perf: for "% of peak"
  {
    json manifest = make_manifest(o.argv, o.suite.seed, options_json(o), infos);
    manifest["sandbox"] = sandboxed ? sandbox_description() : "off";
    if (o.perf) {
      peaks = machine_peaks(o.threads);
      manifest["machine"]["peaks"] = peaks_json(peaks);
    }
    std::string mpath = o.out + "/manifest.json";
    if (!o.resume.empty() && fs::exists(mpath)) {
      std::ifstream mf(mpath);
      json old = json::parse(mf, nullptr, false);
      if (!old.is_discarded()) {
        if (!old.is_object()) input_error(mpath, "not a crucible manifest (not a JSON object)");
        if (old.contains("resumed") && !old["resumed"].is_array())
          input_error(mpath, "the field \"resumed\" is not a list");
        old["resumed"].push_back(manifest["started_at"]);
        manifest = old;
      }
    }
    write_file_atomically(mpath, manifest.dump(2) + "\n");
  }

  std::set<std::string> done_cases, done_timings;
  for (const CaseResult& r : results) done_cases.insert(r.case_id);
  for (const TimingRecord& t : timings) done_timings.insert(t.case_id);

  ResultsFile out(results_path);
  auto base_result = [&](const SuiteCase& sc) {
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
  };
  auto record = [&](CaseResult r) {
    out.append(to_json(r));
    results.push_back(std::move(r));
  };

  // Cases decided without running anything.
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
      record(std::move(r));
    } else if (!sc.op) {
      CaseResult r = base_result(sc);
      r.status = Status::Unsupported;
      r.detail = "the op is not in crucible's catalog";
      record(std::move(r));
    } else {
      to_run.push_back(i);
    }
  }

  // Correctness, in parallel isolated workers.
  WorkerBackends* wb = new WorkerBackends();  // lives in each worker after fork
  WorkerOptions wo;
  wo.workers = std::min<int>(o.workers, static_cast<int>(std::max<size_t>(1, to_run.size())));
  wo.timeout_s = o.timeout_s;
  wo.memory_limit = o.memory_limit;
  wo.on_worker_start = [&o, wb, sandboxed, &sandbox] {
    set_allocation_limit(o.memory_limit);
    wb->reference = BackendRegistry::instance().create(o.reference);
    wb->candidate = BackendRegistry::instance().create(o.backend);
    if (o.perf) wb->baseline = BackendRegistry::instance().create(o.baseline);
    // Kernels from outside run in candidate processes of their own, sandboxed; this worker
    // (which judges) never loads them.
    CandidateIsolation iso;
    if (sandboxed) iso.enter_sandbox = [&sandbox] { return enter_sandbox(sandbox); };
    iso.call_started = sandbox_job_started;
    iso.adopt_note_page = adopt_worker_death_note_page;
    iso.set_note = [](const std::string& note) { set_worker_death_note(note.c_str()); };
    for (Backend* b : {wb->reference.get(), wb->candidate.get(), wb->baseline.get()})
      if (b) {
        b->set_num_threads(o.threads);
        b->isolate_candidates(iso);
      }
  };
  {
    Progress progress("correctness", to_run.size(), o.progress);
    WorkerPool pool(wo, [&](size_t i) {
      sandbox_job_started();
      const SuiteCase& sc = cases[i];
      // An error that escapes the evaluation (an input copy over the memory limit, ...) is
      // this case's verdict, never the worker's end.
      CaseResult r;
      try {
        r = evaluate_case(sc.c, *sc.op, *wb->reference, *wb->candidate);
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
      if (r.status != Status::Passed) r.reproducer = sc.c.reproducer(o.backend);
      return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
    });
    pool.run(
        to_run,
        [&](size_t i, const std::string& payload) {
          // Validated (a malformed report is the case's verdict) and written as crucible
          // serialises it, never as the worker's bytes.
          CaseResult r = case_report(payload, cases[i].c.id());
          progress.add(r.status == Status::Passed);
          out.append(to_json(r));
          results.push_back(std::move(r));
        },
        [&](size_t i, const JobFailure& f) {
          CaseResult r = base_result(cases[i]);
          r.status = f.kind == JobFailure::Kind::TimedOut ? Status::TimedOut : Status::Crashed;
          r.detail = f.detail;
          if (sandboxed && f.signal == SIGSYS && f.detail.find("sandbox:") == std::string::npos)
            r.detail += ": " + sandbox_unexplained_sigsys();
          r.reproducer = cases[i].c.reproducer(o.backend);
          progress.add(false);
          record(std::move(r));
        });
    progress.finish();
  }

  // Timing: one case at a time, nothing else running, candidate and baseline alternating.
  LoadSample load_before, load_after;
  if (o.perf) {
    load_before = sample_load();
    std::map<std::string, const CaseResult*> by_id;
    for (const CaseResult& r : results) by_id[r.case_id] = &r;
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
    WorkerOptions to = wo;
    to.workers = 1;
    to.timeout_s = o.timeout_s * 4;
    TimingOptions topts;
    topts.cold_cache = o.cold_cache;
    Progress progress("timing", to_time.size(), o.progress);
    WorkerPool pool(to, [&](size_t i) {
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
    });
    pool.run(
        to_time,
        [&](size_t i, const std::string& payload) {
          TimingRecord t = timing_report(payload, cases[i].c.id());
          progress.add(t.error.empty());
          out.append(to_json(t));
          timings.push_back(std::move(t));
        },
        [&](size_t i, const JobFailure& f) {
          TimingRecord t;
          t.case_id = cases[i].c.id();
          t.op = cases[i].c.op;
          t.call = cases::print_call(cases[i].c.call);
          t.error = f.detail;
          assess_timing(t);
          progress.add(false);
          out.append(to_json(t));
          timings.push_back(std::move(t));
        });
    progress.finish();
    load_after = sample_load();
  }
  delete wb;

  // Only the cases of this suite count (a resumed folder holds exactly these).
  std::map<std::string, std::string> families;
  for (const OpDef* op : OpRegistry::catalog().all()) families[op->name] = op->family;
  RunSummary s = summarize(results, timings, families, o.p);
  s.suite = o.suite.suite;
  s.backend = o.backend;
  s.reference = o.reference;
  s.baseline = o.perf ? o.baseline : "";
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (o.perf) add_peak_fractions(s, timings, peaks);
  s.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  s.load_before = load_before.loadavg;
  s.load_after = load_after.loadavg;
  s.running_before = load_before.running;
  s.running_after = load_after.running;
  std::string command;
  for (const std::string& a : o.argv) command += (command.empty() ? "" : " ") + a;
  write_summary_json(o.out + "/summary.json", s);
  write_operator_csv(o.out + "/operator_summary.csv", s);
  write_summary_md(o.out + "/SUMMARY.md", s, results, command);
  write_junit(o.out + "/junit.xml", s, results);
  if (o.progress) fmt::print("{}", console_table(s, o.out));

  // A timing that failed fails the run as a case would.
  bool all_passed = s.count(Status::Passed) > 0 && s.timing_errors == 0;
  for (const auto& [st, n] : s.by_status)
    if (n > 0 && st != Status::Passed && st != Status::Skipped) all_passed = false;
  return all_passed ? 0 : 1;
}

}  // namespace crucible
