// Evaluating an attempt: its kernel folder run on a case file by `crucible run` in a child
// process (the same binary), whose results.jsonl is read back.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "eval/generate_internal.h"
#include "sandbox/remove_tree.h"

extern char** environ;

namespace crucible::gen {

namespace fs = std::filesystem;

void write_case_file(const std::string& path, const std::string& op,
                     const std::vector<GenCase>& cases) {
  std::ofstream f(path);
  if (!f) input_error(path, "cannot write the case file");
  f << "Operator: " << op << "\n";
  for (const GenCase& c : cases) f << "cnt: 1, " << cases::print_call(c.call) << "\n";
  if (!f) input_error(path, "cannot write the case file");
}

namespace {

std::string tail_of(const std::string& path, size_t n) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > n ? "..." + s.substr(s.size() - n) : s;
}

}  // namespace

Evaluation evaluate_folder(const std::string& kernels, const std::string& cases_file, uint64_t seed,
                           const std::string& out, const GenerateOptions& o) {
  Evaluation e;
  std::error_code ec;
  remove_tree(out);  // a resumed generation evaluates again from nothing
  const std::string log = out + ".log";
  const int workers = o.workers > 0
                          ? o.workers
                          : std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) / o.jobs);
  std::vector<std::string> args = {"crucible",
                                   "run",
                                   "--suite",
                                   "traces:" + cases_file,
                                   "--backend",
                                   "dir:" + kernels,
                                   "--seed",
                                   std::to_string(seed),
                                   "--out",
                                   out,
                                   "--quiet",
                                   "--workers",
                                   std::to_string(workers),
                                   "--timeout",
                                   fmt::format("{}", o.timeout_s)};
  if (!o.sandbox) args.push_back("--no-sandbox");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    e.problem = fmt::format("cannot start crucible run: {}", std::strerror(rc));
    return e;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0 && code != 1) {
    e.problem = fmt::format("crucible run ended with status {}: {} (log: {})", code,
                            tail_of(log, 400), log);
    return e;
  }
  std::ifstream f(out + "/results.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("record", "") != "case") continue;
    e.results.push_back(case_result_from_json(j));
  }
  e.total = static_cast<int>(e.results.size());
  e.passed = static_cast<int>(std::count_if(e.results.begin(), e.results.end(), [](const auto& r) {
    return r.status == Status::Passed;
  }));
  e.ran = true;
  return e;
}

std::string failing_cases_text(const Evaluation& e, size_t limit) {
  std::string s;
  size_t shown = 0, failing = 0;
  for (const CaseResult& r : e.results) {
    if (r.status == Status::Passed) continue;
    ++failing;
    if (shown >= limit) continue;
    ++shown;
    s += fmt::format("- {} {} [{}]: {}\n  reproducer: {}\n", r.op, r.call, status_name(r.status),
                     r.detail, r.reproducer);
  }
  if (failing > shown) s += fmt::format("- ... and {} more failing case(s)\n", failing - shown);
  return s;
}

}  // namespace crucible::gen
