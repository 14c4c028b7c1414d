// `--sanitize memcheck`: the failing cases of a run again, alone, under a memory checker (see
// sanitize.h).
#include "eval/sanitize.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/dir/kernel_folder.h"
#include "backends/plugin/probe.h"
#include "crucible/core/error.h"
#include "crucible/eval/run_plan.h"
#include "crucible/eval/saved_inputs.h"
#include "crucible/graph/safetensors.h"
#include "crucible/report/atomic_file.h"
#include "eval/run_folder.h"
#include "eval/run_phases.h"
#include "sandbox/inherited_fds.h"
#include "sandbox/remove_tree.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

// What marks a detail that already holds a checker's report (a resumed run skips that case).
constexpr const char* kReportMark = "\n\nmemcheck (";

// How much slower a case runs under each checker: its --timeout is scaled by this.
constexpr double kValgrindSlowdown = 20;
constexpr double kSanitizerSlowdown = 5;
// Added to the scaled timeout for starting crucible (and its checker) and compiling nothing new.
constexpr double kStartSeconds = 120;

std::string checker_label(Checker c) {
  return c == Checker::Valgrind ? "valgrind --tool=memcheck" : "compute-sanitizer --tool memcheck";
}

// `name` on PATH, else in `extra` folders; empty when nowhere.
std::string find_program(const std::string& name, const std::vector<std::string>& extra) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) dirs.push_back(d);
  }
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  for (const std::string& d : dirs) {
    const std::string p = d + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Where CUDA's tools live besides PATH: $CUDA_HOME/bin, else /usr/local/cuda/bin.
std::vector<std::string> cuda_bin_dirs() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) return {std::string(v) + "/bin"};
  return {"/usr/local/cuda/bin"};
}

std::string checker_program(Checker c) {
  return c == Checker::Valgrind ? find_program("valgrind", {})
                                : find_program("compute-sanitizer", cuda_bin_dirs());
}

// Whether the plugin library at `path` says it runs on CUDA (asked of its load probe once).
bool plugin_is_cuda(const std::string& path) {
  static std::map<std::string, bool> known;
  if (auto it = known.find(path); it != known.end()) return it->second;
  bool cuda = false;
  try {
    cuda = probe_kernel_library(path).cuda;
  } catch (const Error&) {
    cuda = false;  // a library that does not load fails every case; valgrind sees the attempt
  }
  return known[path] = cuda;
}

// The kernels of a folder: op -> whether its kernel is a .cu file.
const std::map<std::string, bool>& folder_kernels(const std::string& folder) {
  static std::map<std::string, std::map<std::string, bool>> known;
  if (auto it = known.find(folder); it != known.end()) return it->second;
  std::map<std::string, bool> ops;
  for (const dir::KernelSource& k : dir::scan_kernel_folder(folder).kernels) ops[k.op] = k.cuda;
  return known[folder] = ops;
}

// The checkers a candidate may need, whatever the op.
std::set<Checker> checkers_of(const std::string& backend) {
  if (backend.starts_with("dir:")) {
    std::set<Checker> out;
    for (const auto& [op, cuda] : folder_kernels(backend.substr(4)))
      out.insert(cuda ? Checker::ComputeSanitizer : Checker::Valgrind);
    if (out.empty()) out.insert(Checker::Valgrind);
    return out;
  }
  return {checker_for(backend, "")};
}

// A child process: `argv` with `env_add` ("NAME=value") over this process's environment, stdout
// and stderr into `log`, stdin from /dev/null, in a process group of its own.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env_add,
            const std::string& log) {
  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(env_add.begin(), env_add.end(),
                     [&](const std::string& a) { return a.starts_with(key); }))
      env_text.push_back(entry);
  }
  env_text.insert(env_text.end(), env_add.begin(), env_add.end());
  std::vector<char*> envp;
  for (const std::string& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid != 0) {
    if (pid > 0) setpgid(pid, pid);
    return pid;
  }
  setpgid(0, 0);
  const int in = open("/dev/null", O_RDONLY);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0) _exit(126);
  dup2(in, 0);
  dup2(out, 1);
  dup2(out, 2);
  close_fds_from(3);  // the run's own files stay with the run
  execve(args[0], args.data(), envp.data());
  const char* why = std::strerror(errno);
  (void)!write(2, "cannot run the checker: ", 24);
  (void)!write(2, why, std::strlen(why));
  _exit(127);
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail_of(const std::string& s, size_t n) {
  return s.size() > n ? "..." + s.substr(s.size() - n) : s;
}

// A line without valgrind's "==pid== " prefix.
std::string strip_pid(const std::string& line) {
  if (line.size() > 2 && line[0] == '=' && line[1] == '=') {
    const size_t end = line.find("== ", 2);
    if (end != std::string::npos) return line.substr(end + 3);
    if (line.find("==", 2) == line.size() - 2) return "";
  }
  return line;
}

// An error's text with its addresses blanked: the key under which repeats count once.
std::string without_addresses(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '0' && i + 1 < s.size() && s[i + 1] == 'x') {
      out += "0x?";
      i += 2;
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
      --i;
      continue;
    }
    out += s[i];
  }
  return out;
}

// The first `n` lines of `s`.
std::string first_lines(const std::string& s, int n) {
  size_t at = 0;
  for (int i = 0; i < n && at != std::string::npos; ++i) {
    at = s.find('\n', at == 0 ? 0 : at + 1);
  }
  return at == std::string::npos ? s : s.substr(0, at);
}

// The errors (each a block of lines) trimmed to `max_errors` and about `max_chars`, repeats once:
// errors whose first `key_lines` lines (all when 0) differ only in their addresses.
std::string join_errors(const std::vector<std::string>& errors, size_t max_errors, size_t max_chars,
                        int key_lines = 0) {
  std::set<std::string> seen;
  std::vector<std::string> kept;
  size_t distinct = 0;
  for (const std::string& e : errors) {
    const std::string key = key_lines > 0 ? first_lines(e, key_lines) : e;
    if (!seen.insert(without_addresses(key)).second) continue;
    ++distinct;
    if (kept.size() < max_errors) kept.push_back(e);
  }
  std::string out;
  size_t shown = 0;
  for (const std::string& e : kept) {
    if (!out.empty() && out.size() + e.size() > max_chars) break;
    out += (out.empty() ? "" : "\n") + (e.size() > max_chars ? e.substr(0, max_chars) + "..." : e);
    ++shown;
  }
  if (distinct > shown) out += fmt::format("\n... and {} more distinct error(s)", distinct - shown);
  return out;
}

// A valgrind line that starts an error report (not its banner, its summaries or a warning).
bool valgrind_error_start(const std::string& line) {
  if (line.empty() || line[0] == ' ') return false;
  for (const char* skip : {"Memcheck,",
                           "Copyright",
                           "Using Valgrind",
                           "Command:",
                           "Parent PID:",
                           "HEAP SUMMARY",
                           "LEAK SUMMARY",
                           "ERROR SUMMARY",
                           "For lists of detected",
                           "For counts of detected",
                           "Rerun with",
                           "in use at exit",
                           "total heap usage",
                           "All heap blocks",
                           "Warning:",
                           "Use --track-origins",
                           "For a detailed leak",
                           "   ",
                           "More than ",
                           "Will ",
                           "Exit program",
                           "Valgrind"})
    if (line.starts_with(skip)) return false;
  return true;
}

// The frames of one stack valgrind lists that are kept.
constexpr int kMaxFrames = 10;

// The host frames compute-sanitizer lists under an error (the launch's backtrace) beyond this
// many are left out.
constexpr int kMaxHostFrames = 6;

}  // namespace

void check_sanitize_value(const std::string& value) {
  if (value != "memcheck")
    usage_error(
        fmt::format("--sanitize {}: unknown checker; valid: {} (failing cases run again under "
                    "compute-sanitizer's memcheck on CUDA, valgrind's memcheck on the CPU)",
                    value.empty() ? "''" : value, kSanitizeValues));
}

Checker checker_for(const std::string& backend, const std::string& op) {
  if (backend.starts_with("aten:cuda") || backend == "flag_gems") return Checker::ComputeSanitizer;
  if (backend.starts_with("plugin:"))
    return plugin_is_cuda(backend.substr(7)) ? Checker::ComputeSanitizer : Checker::Valgrind;
  if (backend.starts_with("dir:")) {
    const auto& ops = folder_kernels(backend.substr(4));
    auto it = ops.find(op);
    return it != ops.end() && it->second ? Checker::ComputeSanitizer : Checker::Valgrind;
  }
  return Checker::Valgrind;
}

void require_checkers(const RunOptions& o) {
  if (o.sanitize.empty()) return;
  check_sanitize_value(o.sanitize);
  for (Checker c : checkers_of(o.backend)) {
    if (!checker_program(c).empty()) continue;
    if (c == Checker::Valgrind)
      usage_error(fmt::format(
          "--sanitize memcheck: valgrind is not installed (not on PATH); it checks the failing "
          "cases of CPU candidates such as {}: install Debian's package valgrind (apt-get install "
          "valgrind)",
          o.backend));
    std::string where;
    for (const std::string& d : cuda_bin_dirs()) where += ", " + d;
    usage_error(fmt::format(
        "--sanitize memcheck: compute-sanitizer is not installed (not on PATH{}); it checks the "
        "failing cases of CUDA candidates such as {}: it comes with the CUDA toolkit (NVIDIA's "
        "package cuda-sanitizer-<version>, Debian's nvidia-cuda-toolkit); set CUDA_HOME to the "
        "toolkit's folder if it is elsewhere",
        where, o.backend));
  }
}

std::string valgrind_errors(const std::vector<std::string>& logs, size_t max_errors,
                            size_t max_chars) {
  std::vector<std::string> errors;
  for (const std::string& log : logs) {
    std::stringstream ss(log);
    std::string raw, block;
    int frames = 0;
    bool cut = false;
    auto flush = [&] {
      if (!block.empty()) errors.push_back(block);
      block.clear();
      frames = 0;
      cut = false;
    };
    while (std::getline(ss, raw)) {
      // "--pid-- ..." lines are valgrind's own messages (an unhandled system call), no error.
      if (raw.starts_with("--")) continue;
      const std::string line = strip_pid(raw);
      if (line.empty()) {
        flush();
        continue;
      }
      if (block.empty()) {
        if (valgrind_error_start(line)) block = line;
        continue;
      }
      if (line.find(" at 0x") != std::string::npos || line.find(" by 0x") != std::string::npos) {
        // The kernel's frames matter; crucible's own below them (the kernel host, the worker)
        // are the same for every error and are cut, once said.
        if (cut) continue;
        if (frames > 0 && line.find("crucible::") != std::string::npos) {
          cut = true;
          block += "\n   by ... (crucible's own frames)";
          continue;
        }
        if (++frames > kMaxFrames) continue;
      } else {
        frames = 0;
        cut = false;
      }
      block += "\n" + line;
    }
    flush();
  }
  return join_errors(errors, max_errors, max_chars);
}

std::string sanitizer_errors(const std::string& output, size_t max_errors, size_t max_chars) {
  std::vector<std::string> errors;
  std::stringstream ss(output);
  std::string raw, block;
  int host_frames = 0;
  auto flush = [&] {
    if (!block.empty()) errors.push_back(block);
    block.clear();
    host_frames = 0;
  };
  while (std::getline(ss, raw)) {
    if (!raw.starts_with("=========")) continue;
    std::string line = raw.substr(9);
    if (line.starts_with(" ")) line = line.substr(1);
    if (line.empty()) {
      flush();
      continue;
    }
    const bool indented = line.starts_with(" ");
    if (!indented) {
      flush();
      if (line.starts_with("COMPUTE-SANITIZER") || line.starts_with("ERROR SUMMARY") ||
          line.starts_with("LEAK SUMMARY"))
        continue;
      block = line;
      continue;
    }
    if (block.empty()) continue;
    if (line.find("Host Frame") != std::string::npos && ++host_frames > kMaxHostFrames) continue;
    block += "\n" + line;
  }
  flush();
  // One thread's error stands for the others of the same kind at the same place.
  return join_errors(errors, max_errors, max_chars, 2);
}

void run_sanitize(RunPlan& plan, RunRecords& records) {
  const RunOptions& o = plan.options;
  if (o.sanitize.empty()) return;
  std::map<std::string, const SuiteCase*> case_of;
  for (const SuiteCase& sc : plan.cases) case_of.emplace(sc.c.id(), &sc);

  struct Rerun {
    size_t index;  // into records.results
    const SuiteCase* sc;
    Checker checker;
    std::string dir;
    pid_t pid = -1;
    std::chrono::steady_clock::time_point deadline;
    double limit_s = 0;
  };
  std::vector<Rerun> todo;
  bool noted = false;  // a detail changed without a re-run
  for (size_t i = 0; i < records.results.size(); ++i) {
    const CaseResult& r = records.results[i];
    if (r.status != Status::Failed && r.status != Status::Crashed && r.status != Status::TimedOut)
      continue;
    if (r.detail.find(kReportMark) != std::string::npos) continue;
    auto it = case_of.find(r.case_id);
    if (it == case_of.end()) continue;
    if (it->second->evaluate || !it->second->op) {
      records.results[i].detail += std::string(kReportMark) +
                                   "not run): a whole-model case has no single-case run "
                                   "(crucible run --op/--case); run its ops' cases instead";
      noted = true;
      continue;
    }
    todo.push_back({i, it->second, checker_for(o.backend, r.op),
                    fmt::format("{}/sanitize/{}", o.out, r.case_id)});
  }
  if (todo.empty() && !noted) return;

  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const size_t parallel = static_cast<size_t>(std::max(1, o.workers));
  if (o.progress && !todo.empty())
    std::fprintf(stderr,
                 "crucible: --sanitize memcheck: %zu failing case%s again under the checker\n",
                 todo.size(), todo.size() == 1 ? "" : "s");

  auto start = [&](Rerun& job) {
    const SuiteCase& sc = *job.sc;
    std::error_code ec;
    remove_tree(job.dir);  // never fs::remove_all: see sandbox/remove_tree.h
    fs::create_directories(job.dir, ec);
    const double slowdown =
        job.checker == Checker::Valgrind ? kValgrindSlowdown : kSanitizerSlowdown;
    const double case_timeout = std::min(1e6, o.timeout_s * slowdown);
    job.limit_s = case_timeout + size_allowance_s(sc) + kStartSeconds;  // as the re-run's own
    std::vector<std::string> argv;
    std::vector<std::string> env;
    const std::string program = checker_program(job.checker);
    if (job.checker == Checker::Valgrind) {
      // Without --track-origins: crucible's start-up under memcheck (libtorch's static
      // initialisers) is most of a re-run's time, and origins make it half as slow again.
      argv = {program,           "--tool=memcheck",  "--trace-children=no",
              "--leak-check=no", "--num-callers=16", "--log-file=" + job.dir + "/valgrind.%p.log"};
      // Under valgrind's CPU model OpenBLAS may pick another core and crucible would exec itself
      // again (blas_core.h), outside valgrind; Python's allocator hides its blocks from it.
      env = {"CRUCIBLE_KEEP_BLAS_CORE=1", "PYTHONMALLOC=malloc"};
    } else {
      argv = {program, "--tool", "memcheck", "--target-processes", "all", "--print-limit", "20"};
      // The checker follows the re-run's processes through descriptors it gives each of them;
      // a worker that closed its own (as crucible's children do) was stopped inside its next
      // fork(), before the candidate process ran ("Target application terminated before first
      // instrumented API call"). The re-run's children keep inherited descriptors
      // (inherited_fds.h). A restart of crucible for OpenBLAS's core type (blas_core.h) is not
      // needed either: the run's choice of core is inherited.
      env = {std::string(kKeepInheritedFdsEnv) + "=1", "CRUCIBLE_KEEP_BLAS_CORE=1"};
    }
    for (const std::string& a :
         {exe, std::string("run"), std::string("--op"), sc.c.op, std::string("--case"),
          cases::print_call(sc.c.call), std::string("--seed"), std::to_string(sc.c.seed),
          std::string("--backend"), o.backend, std::string("--reference"), o.reference,
          std::string("--out"), job.dir + "/run", std::string("--history"), std::string("none"),
          std::string("--quiet"), std::string("--workers"), std::string("1"),
          std::string("--threads"), std::to_string(o.threads), std::string("--timeout"),
          fmt::format("{}", case_timeout), std::string("--memory-limit"),
          // A checker's own memory (valgrind's shadow memory, compute-sanitizer's tracking in
          // every process it instruments) counts in the worker's data limit, which the
          // candidate processes inherit: no limit under either. The case already ran under the
          // limit in the run itself.
          std::string("0")})
      argv.push_back(a);
    // compute-sanitizer's library, loaded into every process of the re-run, reports to its
    // front end over a socket, which the sandbox's seccomp filter refuses: under it the
    // candidate's CUDA calls were never instrumented ("Target application terminated before
    // first instrumented API call"). That one re-run goes without the sandbox.
    if (!o.sandbox || job.checker == Checker::ComputeSanitizer) argv.push_back("--no-sandbox");
    if (sc.inputs && sc.op) {
      const std::string file = job.dir + "/inputs.safetensors";
      graph::write_safetensors(file, named_input_tensors(*sc.op, *sc.inputs));
      argv.push_back("--inputs");
      argv.push_back(file);
    }
    job.deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(job.limit_s * 1000));
    job.pid = spawn(argv, env, job.dir + "/output.log");
  };

  auto finish = [&](Rerun& job, int status, bool timed_out) {
    CaseResult& r = records.results[job.index];
    std::string verdict;
    if (timed_out) {
      verdict = fmt::format("did not finish in {:.0f} s and was stopped", job.limit_s);
    } else {
      const std::vector<nlohmann::json> lines = [&] {
        std::vector<nlohmann::json> out;
        std::ifstream f(job.dir + "/run/results.jsonl");
        std::string line;
        while (std::getline(f, line)) {
          nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
          if (!j.is_discarded() && j.is_object() && j.value("record", "") == "case")
            out.push_back(j);
        }
        return out;
      }();
      if (!lines.empty())
        verdict = lines.front().value("status", "?");
      else
        verdict =
            fmt::format("gave no verdict ({}): {}",
                        WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                            : fmt::format("exit status {}", WEXITSTATUS(status)),
                        tail_of(read_all(job.dir + "/output.log"), 600));
    }
    std::string report;
    if (job.checker == Checker::Valgrind) {
      std::vector<std::string> logs;
      std::vector<fs::path> files;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(job.dir, ec))
        if (e.path().filename().string().starts_with("valgrind.")) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& p : files) logs.push_back(read_all(p.string()));
      report = valgrind_errors(logs);
    } else {
      report = sanitizer_errors(read_all(job.dir + "/output.log"));
    }
    r.detail +=
        fmt::format("{}{}), the case run again alone: {}; {} (whole output: {})", kReportMark,
                    checker_label(job.checker), verdict,
                    report.empty() ? "no memory error found" : "its errors:\n" + report, job.dir);
  };

  size_t next = 0, running = 0;
  std::vector<Rerun*> live;
  while (next < todo.size() || running > 0) {
    while (running < parallel && next < todo.size()) {
      start(todo[next]);
      live.push_back(&todo[next]);
      ++next;
      ++running;
    }
    for (auto it = live.begin(); it != live.end();) {
      Rerun& job = **it;
      int status = 0;
      const pid_t w = job.pid > 0 ? waitpid(job.pid, &status, WNOHANG) : job.pid;
      bool done = w == job.pid || w < 0;
      bool timed_out = false;
      if (!done && std::chrono::steady_clock::now() > job.deadline) {
        kill(-job.pid, SIGKILL);
        waitpid(job.pid, &status, 0);
        done = timed_out = true;
      }
      if (!done) {
        ++it;
        continue;
      }
      if (job.pid > 0) kill(-job.pid, SIGKILL);  // anything it left behind
      finish(job, status, timed_out);
      it = live.erase(it);
      --running;
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // results.jsonl again, with the reports in the details (replaced atomically).
  std::string text;
  for (const CaseResult& r : records.results)
    text += to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (const TimingRecord& t : records.timings)
    text += to_json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  plan.results_file.reset();
  write_file_atomically(plan.results_path, text);
  plan.results_file = std::make_unique<ResultsFile>(plan.results_path);
}

}  // namespace crucible
