// The kernel compiler driver: cache keys, the compiler processes, the cache entries.
#include "backends/dir/kernel_compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
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
#include "sandbox/death_note.h"
#include "sandbox/remove_tree.h"
#include "sandbox/sandbox.h"

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

// At most `limit` bytes of a file.
std::string read_head(const fs::path& p, size_t limit) {
  std::ifstream f(p, std::ios::binary);
  std::string s(limit, '\0');
  f.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<size_t>(std::max<std::streamsize>(0, f.gcount())));
  return s;
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

std::string on_path(const std::string& exe) { return find_on_path(exe); }

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
  // The source, and every other file of its folder (local headers), by name. Links are not
  // followed (their target's name is hashed): reading one that points at a device or a fifo would
  // hang this process, and the compiler cannot read outside the folder anyway.
  fs::path folder = fs::path(job.source).parent_path();
  std::vector<std::pair<fs::path, bool>> files;  // path, is a link
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    fs::file_status st = e.symlink_status(ec);
    if (fs::is_regular_file(st) || fs::is_symlink(st))
      files.emplace_back(e.path(), fs::is_symlink(st));
  }
  std::sort(files.begin(), files.end());
  add(fs::path(job.source).filename().string());
  for (const auto& [f, link] : files) {
    add(f.filename().string());
    add(link ? "link:" + fs::read_symlink(f, ec).string() : read_file(f));
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
  o.output_bytes = j.value("output_bytes", size_t{0});
  o.diagnostics = read_head(entry / "compile.log", kCompileLogLimit);
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
  pid_t pid;   // the compiler, leader of its own process group
  int out_fd;  // the read end of its stdout and stderr (non-blocking)
  fs::path tmp;
  std::chrono::steady_clock::time_point start;
  std::string output;  // the first kCompileLogLimit bytes of its output
  size_t output_bytes = 0;
  bool eof = false;
};

// Reads what the compiler wrote so far; keeps the first kCompileLogLimit bytes.
void drain(Running& r) {
  char buf[65536];
  for (;;) {
    ssize_t k = read(r.out_fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) r.eof = true;
    if (k <= 0) return;
    size_t n = static_cast<size_t>(k);
    if (r.output.size() < kCompileLogLimit)
      r.output.append(buf, std::min(n, kCompileLogLimit - r.output.size()));
    r.output_bytes += n;
  }
}

// Starts the compiler `argv` in a forked child that enters the compile sandbox first, in its
// own process group, with stdin from /dev/null, stdout and stderr into a pipe, TMPDIR and the
// working folder `tmp`. Returns "" (and the pid and the pipe's read end) or why it did not start.
std::string start_compiler(const std::vector<std::string>& argv, const CompileSandboxOptions& box,
                           const fs::path& tmp, pid_t* pid_out, int* fd_out) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    if (!std::string_view(*e).starts_with("TMPDIR=")) env_strings.emplace_back(*e);
  env_strings.push_back("TMPDIR=" + tmp.string());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string cwd = tmp.string();

  int out[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  if (pipe2(status, O_CLOEXEC) != 0) {
    int e = errno;
    close(out[0]);
    close(out[1]);
    return fmt::format("pipe: {}", std::strerror(e));
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // The child: set up, enter the sandbox, exec. Nothing of the parent's stays open but the
    // output pipe (as stdout and stderr) and the status pipe (closed by exec).
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int err_fd = fcntl(status[1], F_DUPFD_CLOEXEC, 10);
    const int null_fd = open("/dev/null", O_RDONLY);
    auto fail = [&](const std::string& why) {
      if (err_fd >= 0) {
        ssize_t k = write(err_fd, why.data(), why.size());
        (void)k;
      }
      _exit(127);
    };
    if (err_fd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out[1], 1) < 0 ||
        dup2(out[1], 2) < 0)
      fail(fmt::format("cannot set up the compiler's input and output: {}", std::strerror(errno)));
    close_range(3, static_cast<unsigned>(err_fd) - 1, 0);
    close_range(static_cast<unsigned>(err_fd) + 1, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
    if (chdir(cwd.c_str()) != 0) fail(fmt::format("chdir {}: {}", cwd, std::strerror(errno)));
    if (std::string why = enter_compile_sandbox(box); !why.empty())
      fail("the compile sandbox could not be set up: " + why);
    execvpe(args[0], args.data(), envp.data());
    fail(std::strerror(errno));
  }
  close(out[1]);
  close(status[1]);
  if (pid < 0) {
    int e = errno;
    close(out[0]);
    close(status[0]);
    return fmt::format("fork: {}", std::strerror(e));
  }
  setpgid(pid, pid);
  // The status pipe closes at exec, or carries why the compiler did not start.
  std::string why;
  char buf[512];
  for (;;) {
    ssize_t k = read(status[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (why.size() < 4096) why.append(buf, static_cast<size_t>(k));
  }
  close(status[0]);
  if (!why.empty()) {
    close(out[0]);
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return why;
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  *pid_out = pid;
  *fd_out = out[0];
  return "";
}

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
  // The shared CUDA runtime: the kernel then uses the runtime (and its context and error state)
  // that crucible started in the candidate process, not a static copy of its own.
  c.cuda_flags = {"-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"};
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
  c.dlpack_include_dir = env("CRUCIBLE_DLPACK_INCLUDE_DIR");
#ifdef CRUCIBLE_DLPACK_INCLUDE_DIR
  if (c.dlpack_include_dir.empty()) c.dlpack_include_dir = CRUCIBLE_DLPACK_INCLUDE_DIR;
#endif
  if (c.dlpack_include_dir == "/usr/include" || c.dlpack_include_dir == "/usr/local/include")
    c.dlpack_include_dir.clear();
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
      o.problem =
          "no CUDA compiler: .cu kernels are compiled with nvcc (set NVCC or CUDA_HOME, or put "
          "nvcc on PATH)";
      continue;
    }
    o.compiler = compiler_version(compiler);
    if (o.compiler.empty()) {
      o.problem = fmt::format("cannot run the compiler '{}' (set {} to the compiler to use)",
                              command_text(compiler), job.cuda ? "NVCC" : "CXX");
      continue;
    }
    std::vector<std::string> argv = compiler;
    for (const std::string& f : job.cuda ? cfg.cuda_flags : cfg.cxx_flags) argv.push_back(f);
    argv.push_back("-I" + cfg.include_dir);
    if (!cfg.dlpack_include_dir.empty()) argv.push_back("-I" + cfg.dlpack_include_dir);
    argv.push_back("-I" + fs::path(job.source).parent_path().string());
    argv.push_back(job.source);
    const fs::path entry = cache / cache_key(job, argv, o.compiler, cfg.include_dir);
    if (fs::exists(entry, ec)) {
      CompileOutcome hit = outcome_of_entry(entry);
      if (!hit.command.empty()) {
        o = hit;
        continue;
      }
      remove_tree(entry.string());  // a damaged entry: compile again
    }
    queue.push_back({i, std::move(argv), entry});
  }

  // The sandbox of a job: its folder and the include folders to read, its cache entry to write.
  auto sandbox_of = [&](const CompileJob& job, const fs::path& tmp) {
    CompileSandboxOptions box;
    box.exec_dirs = system_toolchain_dirs();
    const std::vector<std::string>& compiler = job.cuda ? cfg.nvcc : cfg.cxx;
    for (const std::string& word : compiler)
      if (std::string prefix = program_prefix(word); !prefix.empty())
        box.exec_dirs.push_back(prefix);
    box.read_dirs = {fs::path(job.source).parent_path().string(), cfg.include_dir};
    if (!cfg.dlpack_include_dir.empty()) box.read_dirs.push_back(cfg.dlpack_include_dir);
    for (const std::string& f : job.cuda ? cfg.cuda_flags : cfg.cxx_flags)
      for (const char* opt : {"-I", "-isystem"})
        if (f.starts_with(opt) && f.size() > std::strlen(opt) &&
            fs::is_directory(f.substr(std::strlen(opt)), ec))
          box.read_dirs.push_back(f.substr(std::strlen(opt)));
    box.read_files = {"/etc/ld.so.cache"};
    box.write_dir = tmp.string();
    // A ccache launcher ($CXX="ccache g++") keeps its own cache.
    for (const std::string& word : compiler)
      if (fs::path(word).filename() == "ccache") {
        box.read_files.push_back("/etc/ccache.conf");
        for (const std::string& d :
             {env("CCACHE_DIR"),
              env("XDG_CACHE_HOME").empty() ? "" : env("XDG_CACHE_HOME") + "/ccache",
              env("HOME").empty() ? "" : env("HOME") + "/.cache/ccache",
              env("HOME").empty() ? "" : env("HOME") + "/.ccache"})
          if (!d.empty()) box.extra_write_dirs.push_back(d);
      }
    box.file_size_limit = size_t{1} << 30;
    // A source can make the compiler allocate without end (template or constexpr bombs).
    if (!job.cuda) box.address_space_limit = size_t{8} << 30;
    box.cpu_seconds = cfg.timeout_s + 5;
    return box;
  };

  auto finish = [&](Running& r, int status, bool timed_out) {
    CompileOutcome& o = out[r.job.index];
    std::vector<std::string> shown = r.job.argv;
    shown.push_back("-o");
    shown.push_back((r.job.entry / "kernel.so").string());
    o.command = command_text(shown);
    o.diagnostics = r.output;
    o.output_bytes = r.output_bytes;
    if (timed_out || !WIFEXITED(status)) {
      // Not the source's fault for certain: not cached.
      if (timed_out) {
        o.problem = fmt::format(
            "the compiler did not finish in {:g} s and was stopped "
            "(CRUCIBLE_KERNEL_COMPILE_TIMEOUT sets the limit)",
            cfg.timeout_s);
      } else {
        const int sig = WTERMSIG(status);
        o.problem = fmt::format("the compiler was killed by {}{}", signal_name(sig),
                                sig == SIGXFSZ   ? " (it wrote a file of more than 1 GiB)"
                                : sig == SIGXCPU ? " (it ran out of CPU time)"
                                                 : "");
      }
      remove_tree(r.tmp.string());
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
              {"output_bytes", r.output_bytes},
              {"seconds", secs}};
    std::ofstream(r.tmp / "compile.json") << j.dump(2) << "\n";
    std::ofstream(r.tmp / "compile.log", std::ios::binary) << r.output;
    // Atomic publication; when another process published the same key first, use theirs.
    if (std::rename(r.tmp.c_str(), r.job.entry.c_str()) != 0) remove_tree(r.tmp.string());
    CompileOutcome entry = outcome_of_entry(r.job.entry);
    if (entry.command.empty()) return;
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
      pid_t pid = -1;
      int fd = -1;
      std::string why = ec ? fmt::format("cannot create {}: {}", tmp.string(), ec.message())
                           : start_compiler(argv, sandbox_of(jobs[p.index], tmp), tmp, &pid, &fd);
      if (!why.empty()) {
        out[p.index].problem =
            fmt::format("cannot run the compiler '{}': {} (set {} to the compiler to use)", argv[0],
                        why, jobs[p.index].cuda ? "NVCC" : "CXX");
        remove_tree(tmp.string());
        continue;
      }
      running.push_back({std::move(p), pid, fd, tmp, std::chrono::steady_clock::now()});
    }
    // Wait for output (or 10 ms), then look at every compile.
    std::vector<pollfd> fds;
    for (const Running& r : running)
      if (!r.eof) fds.push_back({r.out_fd, POLLIN, 0});
    if (!fds.empty())
      poll(fds.data(), fds.size(), 10);
    else if (!running.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (auto it = running.begin(); it != running.end();) {
      drain(*it);
      siginfo_t info;
      std::memset(&info, 0, sizeof info);
      int rc = waitid(P_PID, static_cast<id_t>(it->pid), &info, WEXITED | WNOHANG | WNOWAIT);
      if (rc < 0 && errno == EINTR) continue;
      bool timed_out = false;
      if (rc == 0 && info.si_pid == 0) {
        double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - it->start).count();
        if (ran < cfg.timeout_s) {
          ++it;
          continue;
        }
        timed_out = true;
      }
      // Whatever the compiler left running (a stuck cc1plus) goes with it.
      kill(-it->pid, SIGKILL);
      kill(it->pid, SIGKILL);
      int status = 0;
      while (waitpid(it->pid, &status, 0) < 0 && errno == EINTR) {
      }
      drain(*it);
      close(it->out_fd);
      finish(*it, status, timed_out);
      it = running.erase(it);
    }
  }
  return out;
}

}  // namespace crucible::dir
