// The kernel compiler driver: cache keys, the compiler processes, the cache entries.
#include "backends/dir/kernel_compiler.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/core/rng.h"

extern char** environ;

namespace crucible::dir {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kCacheFormat = "crucible-kernel-cache-1";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::string on_path(const std::string& exe) {
  for (const std::string& dir : [] {
         std::vector<std::string> dirs;
         std::stringstream ss(env("PATH"));
         std::string d;
         while (std::getline(ss, d, ':'))
           if (!d.empty()) dirs.push_back(d);
         return dirs;
       }()) {
    std::string p = dir + "/" + exe;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Starts `argv` with stdin from /dev/null and stdout+stderr into `out_fd`.
pid_t spawn(const std::vector<std::string>& argv, int out_fd, int* err) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
  pid_t pid = -1;
  *err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return *err == 0 ? pid : -1;
}

// The hashed identity of a compile: everything that can change the library.
std::string cache_key(const CompileJob& job, const std::vector<std::string>& command,
                      const std::string& version, const std::string& include_dir) {
  std::string text = kCacheFormat;
  auto add = [&](const std::string& s) {
    text += '\0';
    text += std::to_string(s.size());
    text += ':';
    text += s;
  };
  for (const std::string& a : command) add(a);
  add(version);
  for (const char* h : {"crucible/kernel.h", "crucible/kernel.hpp"})
    add(read_file(fs::path(include_dir) / h));
  // The source, and every other file of its folder (local headers), by name.
  fs::path folder = fs::path(job.source).parent_path();
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  add(fs::path(job.source).filename().string());
  for (const fs::path& f : files) {
    add(f.filename().string());
    add(read_file(f));
  }
  uint64_t a = hash64(text.data(), text.size(), 0x6b65726e656c3031ULL);
  uint64_t b = hash64(text.data(), text.size(), 0x6372756369626c65ULL);
  return fmt::format("{:016x}{:016x}", a, b);
}

CompileOutcome outcome_of_entry(const fs::path& entry) {
  CompileOutcome o;
  std::ifstream f(entry / "compile.json");
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return o;
  o.ok = j.value("ok", false);
  o.command = j.value("command", "");
  o.compiler = j.value("compiler", "");
  o.diagnostics = read_file(entry / "compile.log");
  o.log = (entry / "compile.log").string();
  if (o.ok) o.library = (entry / "kernel.so").string();
  o.cached = true;
  return o;
}

struct Pending {
  size_t index;
  std::vector<std::string> argv;  // without -o
  fs::path entry;                 // the cache entry it becomes
};

struct Running {
  Pending job;
  pid_t pid;
  fs::path tmp;
  std::chrono::steady_clock::time_point start;
};

}  // namespace

std::string kernel_cache_dir() {
  if (std::string d = env("CRUCIBLE_KERNEL_CACHE"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/crucible/kernels";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/crucible/kernels";
  return fmt::format("/tmp/crucible-kernels-{}", getuid());
}

std::string compiler_version(const std::vector<std::string>& compiler) {
  static std::mutex mu;
  static std::map<std::vector<std::string>, std::string> memo;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = memo.find(compiler); it != memo.end()) return it->second;
  std::string version;
  char tmpl[] = "/tmp/crucible-cxx-version-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0) {
    std::vector<std::string> argv = compiler;
    argv.push_back("--version");
    int err = 0;
    pid_t pid = spawn(argv, fd, &err);
    int status = 0;
    if (pid > 0)
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    close(fd);
    std::string text = read_file(tmpl);
    unlink(tmpl);
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line) && version.empty())
        if (!line.empty()) version = line;
      // nvcc prints its release on a later line: keep the whole text in the key.
      if (text.find("Cuda compilation tools") != std::string::npos) {
        size_t p = text.find("release");
        version = "nvcc " + text.substr(p, text.find('\n', p) - p);
      }
    }
  }
  memo[compiler] = version;
  return version;
}

CompilerConfig default_compiler_config() {
  CompilerConfig c;
  c.cxx = split_words(env("CXX"));
  if (c.cxx.empty()) c.cxx = {"c++"};
  if (std::string n = env("NVCC"); !n.empty())
    c.nvcc = split_words(n);
  else if (std::string h = env("CUDA_HOME");
           !h.empty() && access((h + "/bin/nvcc").c_str(), X_OK) == 0)
    c.nvcc = {h + "/bin/nvcc"};
  else if (std::string p = on_path("nvcc"); !p.empty())
    c.nvcc = {p};
  else if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
    c.nvcc = {"/usr/local/cuda/bin/nvcc"};
  c.cxx_flags = {"-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-fdiagnostics-color=never",
                 "-Wl,-z,defs"};
  for (const std::string& f : split_words(env("CRUCIBLE_KERNEL_CXXFLAGS")))
    c.cxx_flags.push_back(f);
  c.cuda_flags = {"-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC"};
  for (const std::string& f : split_words(env("CRUCIBLE_KERNEL_NVCCFLAGS")))
    c.cuda_flags.push_back(f);
  // crucible/kernel.h: next to the binary (a build tree or an install), else the source tree.
  c.include_dir = env("CRUCIBLE_INCLUDE_DIR");
  if (c.include_dir.empty()) {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    for (const fs::path& cand :
         {exe.parent_path().parent_path() / "include", fs::path(CRUCIBLE_SOURCE_DIR) / "include"})
      if (!ec && fs::exists(cand / "crucible" / "kernel.h", ec)) {
        c.include_dir = cand.string();
        break;
      }
    if (c.include_dir.empty()) c.include_dir = fs::path(CRUCIBLE_SOURCE_DIR) / "include";
  }
  c.cache_dir = kernel_cache_dir();
  if (std::string t = env("CRUCIBLE_KERNEL_COMPILE_TIMEOUT"); !t.empty()) {
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end != '\0' || v <= 0)
      usage_error(
          fmt::format("CRUCIBLE_KERNEL_COMPILE_TIMEOUT='{}' is not a number of seconds", t));
    c.timeout_s = v;
  }
  c.jobs = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  return c;
}

std::vector<CompileOutcome> compile_kernels(const std::vector<CompileJob>& jobs,
                                            const CompilerConfig& cfg) {
  std::vector<CompileOutcome> out(jobs.size());
  std::error_code ec;
  fs::create_directories(cfg.cache_dir, ec);
  if (ec)
    input_error(cfg.cache_dir, fmt::format("cannot create the kernel cache: {}; set "
                                           "CRUCIBLE_KERNEL_CACHE to a writable folder",
                                           ec.message()));
  const fs::path cache = fs::absolute(cfg.cache_dir);

  std::deque<Pending> queue;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const CompileJob& job = jobs[i];
    const std::vector<std::string>& compiler = job.cuda ? cfg.nvcc : cfg.cxx;
    CompileOutcome& o = out[i];
    if (compiler.empty()) {
      o.diagnostics =
          "no CUDA compiler: .cu kernels are compiled with nvcc (set NVCC or CUDA_HOME, or put "
          "nvcc on PATH)";
      continue;
    }
    o.compiler = compiler_version(compiler);
    if (o.compiler.empty()) {
      o.diagnostics = fmt::format("cannot run the compiler '{}' (set {} to the compiler to use)",
                                  command_text(compiler), job.cuda ? "NVCC" : "CXX");
      continue;
    }
    std::vector<std::string> argv = compiler;
    for (const std::string& f : job.cuda ? cfg.cuda_flags : cfg.cxx_flags) argv.push_back(f);
    argv.push_back("-I" + cfg.include_dir);
    argv.push_back("-I" + fs::path(job.source).parent_path().string());
    argv.push_back(job.source);
    const fs::path entry = cache / cache_key(job, argv, o.compiler, cfg.include_dir);
    if (fs::exists(entry, ec)) {
      CompileOutcome hit = outcome_of_entry(entry);
      if (!hit.command.empty()) {
        o = hit;
        continue;
      }
      fs::remove_all(entry, ec);  // a damaged entry: compile again
    }
    queue.push_back({i, std::move(argv), entry});
  }

  auto finish = [&](const Running& r, int status, bool timed_out) {
    CompileOutcome& o = out[r.job.index];
    std::vector<std::string> shown = r.job.argv;
    shown.push_back("-o");
    shown.push_back((r.job.entry / "kernel.so").string());
    o.command = command_text(shown);
    std::string log = read_file(r.tmp / "compile.log");
    if (timed_out || !WIFEXITED(status)) {
      // Not the source's fault for certain: not cached.
      o.diagnostics =
          log + (timed_out
                     ? fmt::format("\n(the compiler ran past {:g} s and was killed; "
                                   "CRUCIBLE_KERNEL_COMPILE_TIMEOUT sets the limit)",
                                   cfg.timeout_s)
                     : fmt::format("\n(the compiler was killed by signal {})", WTERMSIG(status)));
      fs::remove_all(r.tmp, ec);
      return;
    }
    const bool ok = WEXITSTATUS(status) == 0 && fs::exists(r.tmp / "kernel.so", ec);
    if (!ok) fs::remove(r.tmp / "kernel.so", ec);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
    json j = {{"format", kCacheFormat},
              {"ok", ok},
              {"exit_status", WEXITSTATUS(status)},
              {"command", o.command},
              {"compiler", o.compiler},
              {"source", r.job.argv.back()},
              {"seconds", secs}};
    std::ofstream(r.tmp / "compile.json") << j.dump(2) << "\n";
    // Atomic publication; when another process published the same key first, use theirs.
    if (std::rename(r.tmp.c_str(), r.job.entry.c_str()) != 0) fs::remove_all(r.tmp, ec);
    CompileOutcome entry = outcome_of_entry(r.job.entry);
    if (entry.command.empty()) {
      o.diagnostics = log;
      return;
    }
    o = entry;
    o.cached = false;
  };

  std::vector<Running> running;
  int seq = 0;
  const size_t max_running = static_cast<size_t>(std::max(1, cfg.jobs));
  while (!queue.empty() || !running.empty()) {
    while (!queue.empty() && running.size() < max_running) {
      Pending p = std::move(queue.front());
      queue.pop_front();
      fs::path tmp =
          cache / fmt::format(".tmp-{}-{}-{}", p.entry.filename().string(), getpid(), seq++);
      fs::create_directories(tmp, ec);
      std::vector<std::string> argv = p.argv;
      argv.push_back("-o");
      argv.push_back((tmp / "kernel.so").string());
      int fd = open((tmp / "compile.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      int err = 0;
      pid_t pid = fd >= 0 ? spawn(argv, fd, &err) : -1;
      if (fd >= 0) close(fd);
      if (pid < 0) {
        out[p.index].diagnostics =
            fmt::format("cannot run the compiler '{}': {} (set {} to the compiler to use)", argv[0],
                        std::strerror(fd < 0 ? errno : err), jobs[p.index].cuda ? "NVCC" : "CXX");
        fs::remove_all(tmp, ec);
        continue;
      }
      running.push_back({std::move(p), pid, tmp, std::chrono::steady_clock::now()});
    }
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      pid_t r = waitpid(it->pid, &status, WNOHANG);
      if (r < 0 && errno == EINTR) continue;
      bool timed_out = false;
      if (r == 0) {
        double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - it->start).count();
        if (ran < cfg.timeout_s) {
          ++it;
          continue;
        }
        kill(it->pid, SIGKILL);
        while (waitpid(it->pid, &status, 0) < 0 && errno == EINTR) {
        }
        timed_out = true;
      }
      finish(*it, status, timed_out);
      it = running.erase(it);
    }
    if (!running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return out;
}

}  // namespace crucible::dir
