// The worker sandbox: seccomp (libseccomp) for system calls, Landlock for file-system writes,
// rlimits for file size and CPU time. The memory limit is the worker pool's RLIMIT_AS.
//
// The seccomp filter is a deny-list: kernels may use threads, memory, files for reading, devices
// (a GPU driver's ioctls), but not the calls that reach outside the worker. A denied call is
// trapped (SIGSYS); the handler leaves a death note naming the call and the worker dies of
// SIGSYS, so the case is recorded as crashed with "sandbox: blocked socket() (network access)".
#include "sandbox/sandbox.h"
#include "sandbox/remove_tree.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sched.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "sandbox/death_note.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

namespace crucible {

namespace {

// Trapped calls, for the SIGSYS handler (which may not allocate): number, name, reason.
struct Trap {
  int nr;
  const char* name;
  const char* why;
};
constexpr int kMaxTraps = 128;
Trap g_traps[kMaxTraps];
int g_num_traps = 0;

bool g_sandboxed = false;
double g_cpu_seconds_per_job = 0;
char g_cpu_note[128];
char g_fsize_note[128];

void append(char*& p, const char* end, const char* s) {
  while (*s != '\0' && p < end) *p++ = *s++;
}

void on_sigsys(int, siginfo_t* info, void*) {
  char buf[200] = {};
  char* p = buf;
  const char* end = buf + sizeof buf - 1;
  const Trap* t = nullptr;
  for (int i = 0; i < g_num_traps; ++i)
    if (g_traps[i].nr == info->si_syscall) t = &g_traps[i];
  append(p, end, "sandbox: blocked ");
  if (t) {
    append(p, end, t->name);
    append(p, end, "() (");
    append(p, end, t->why);
    append(p, end, ")");
  } else {
    char digits[16];
    int n = 0;
    for (unsigned v = static_cast<unsigned>(info->si_syscall); n == 0 || v > 0; v /= 10)
      digits[n++] = static_cast<char>('0' + v % 10);
    append(p, end, "system call ");
    while (n > 0 && p < end) *p++ = digits[--n];
  }
  *p = '\0';
  set_worker_death_note(buf);
  // SA_RESETHAND restored the default action: the worker dies of SIGSYS when this returns.
  raise(SIGSYS);
}

void on_limit(int sig, siginfo_t*, void*) {
  set_worker_death_note(sig == SIGXCPU ? g_cpu_note : g_fsize_note);
  raise(sig);
}

std::string install_handlers() {
  for (int sig : {SIGSYS, SIGXCPU, SIGXFSZ}) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = sig == SIGSYS ? on_sigsys : on_limit;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, nullptr) != 0)
      return fmt::format("sigaction: {}", std::strerror(errno));
  }
  return "";
}

std::string set_limits(const SandboxOptions& o) {
  struct rlimit core = {0, 0};
  if (setrlimit(RLIMIT_CORE, &core) != 0)
    return fmt::format("setrlimit(RLIMIT_CORE): {}", std::strerror(errno));
  if (o.file_size_limit > 0) {
    rlim_t lim = static_cast<rlim_t>(o.file_size_limit);
    struct rlimit cur;
    getrlimit(RLIMIT_FSIZE, &cur);
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < lim) lim = cur.rlim_max;
    struct rlimit fsize = {lim, lim};
    if (setrlimit(RLIMIT_FSIZE, &fsize) != 0)
      return fmt::format("setrlimit(RLIMIT_FSIZE): {}", std::strerror(errno));
    std::snprintf(g_fsize_note, sizeof g_fsize_note,
                  "sandbox: file size limit reached (%zu bytes per file)", o.file_size_limit);
  }
  g_cpu_seconds_per_job = o.cpu_seconds_per_job;
  std::snprintf(g_cpu_note, sizeof g_cpu_note, "sandbox: CPU time limit reached (%.0f s per case)",
                std::ceil(o.cpu_seconds_per_job));
  return "";
}

int count_threads() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return ec ? 1 : n;
}

// "3 threads: crucible, cuda-EvtHandlr, python3": the names of the process's threads.
std::string thread_names() {
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::ifstream f(it->path() / "comm");
    std::string name;
    std::getline(f, name);
    names.push_back(name.empty() ? "?" : name);
  }
  std::string out = fmt::format("{} threads:", names.size());
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
  return out;
}

// Where the process may execute programs from (allow_programs_in_sandbox); empty: nowhere.
std::vector<std::string> g_program_dirs;
// The shared JIT cache's key (share_jit_cache_in_sandbox); empty: none.
std::string g_jit_cache_key;

// Landlock: writes (creating, removing, renaming, truncating, opening for writing) only beneath
// the scratch folder (and the shared JIT cache), and opening devices under /dev for writing (GPU
// drivers, /dev/null). With programs allowed, executing is handled too: allowed only beneath
// g_program_dirs.
std::string restrict_writes(const std::vector<std::string>& writable, int abi) {
  uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                    LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                    LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  struct landlock_ruleset_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = rights | (g_program_dirs.empty() ? 0 : LANDLOCK_ACCESS_FS_EXECUTE);
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (fd < 0) return fmt::format("landlock_create_ruleset: {}", std::strerror(errno));
  auto allow = [&](const char* path, uint64_t access) -> std::string {
    int dir = open(path, O_PATH | O_CLOEXEC);
    if (dir < 0) return fmt::format("cannot open {}: {}", path, std::strerror(errno));
    struct landlock_path_beneath_attr rule;
    std::memset(&rule, 0, sizeof rule);
    rule.allowed_access = access;
    rule.parent_fd = dir;
    long rc = syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    close(dir);
    if (rc != 0) return fmt::format("landlock_add_rule({}): {}", path, std::strerror(err));
    return "";
  };
  std::string err;
  for (const std::string& d : writable)
    if (err.empty()) err = allow(d.c_str(), rights);
  if (err.empty())
    err =
        allow("/dev", LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0));
  // The process's own threads: the CUDA driver names the threads it starts by writing
  // /proc/self/task/<tid>/comm (opened with O_TRUNC), and cuInit fails when it cannot. /proc/self
  // resolves to this process here, so the rule reaches no other process. Without /proc there is
  // nothing to allow.
  if (err.empty() && access("/proc/self/task", F_OK) == 0)
    err = allow("/proc/self/task",
                LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0));
  for (const std::string& d : g_program_dirs) {
    struct stat st {};
    if (err.empty() && stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      err = allow(d.c_str(), LANDLOCK_ACCESS_FS_EXECUTE);
  }
  if (err.empty() && syscall(SYS_landlock_restrict_self, fd, 0) != 0)
    err = fmt::format("landlock_restrict_self: {}", std::strerror(errno));
  close(fd);
  return err;
}

scmp_arg_cmp arg_cmp(unsigned arg, scmp_compare op, uint64_t a, uint64_t b = 0) {
  scmp_arg_cmp c;
  c.arg = arg;
  c.op = op;
  c.datum_a = a;
  c.datum_b = b;
  return c;
}

class Filter {
 public:
  Filter() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
  ~Filter() {
    if (ctx_) seccomp_release(ctx_);
  }
  bool ok() const { return ctx_ != nullptr && error_.empty(); }
  const std::string& error() const { return error_; }
  scmp_filter_ctx ctx() const { return ctx_; }

  // Traps `name` (when the conditions hold, all of them); a call this architecture lacks is
  // skipped.
  void trap(const char* name, const char* why, std::initializer_list<scmp_arg_cmp> args = {}) {
    add(SCMP_ACT_TRAP, name, args);
    int nr = seccomp_syscall_resolve_name(name);
    if (nr >= 0 && !known(nr) && g_num_traps < kMaxTraps) g_traps[g_num_traps++] = {nr, name, why};
  }
  // Makes `name` fail with `err` instead of running, when the conditions hold (clone3: glibc
  // then falls back to clone, whose flags the filter can see; a new SIGSYS action).
  void fail(const char* name, int err, std::initializer_list<scmp_arg_cmp> args = {}) {
    add(SCMP_ACT_ERRNO(static_cast<uint32_t>(err)), name, args);
  }

 private:
  static bool known(int nr) {
    for (int i = 0; i < g_num_traps; ++i)
      if (g_traps[i].nr == nr) return true;
    return false;
  }
  void add(uint32_t action, const char* name, std::initializer_list<scmp_arg_cmp> args) {
    if (!ctx_ || !error_.empty()) return;
    int nr = seccomp_syscall_resolve_name(name);
    if (nr < 0) return;  // not a call of this architecture
    std::vector<scmp_arg_cmp> v(args);
    int rc = seccomp_rule_add_array(ctx_, action, nr, static_cast<unsigned>(v.size()), v.data());
    if (rc < 0) error_ = fmt::format("seccomp rule for {}: {}", name, std::strerror(-rc));
  }
  scmp_filter_ctx ctx_;
  std::string error_;
};

// Calls that reach beyond the process's own privileges or around the sandbox.
constexpr const char* kEscapeCalls[] = {"unshare",
                                        "setns",
                                        "mount",
                                        "umount2",
                                        "pivot_root",
                                        "chroot",
                                        "bpf",
                                        "perf_event_open",
                                        "userfaultfd",
                                        "io_uring_setup",
                                        "io_uring_enter",
                                        "io_uring_register",
                                        "keyctl",
                                        "add_key",
                                        "request_key",
                                        "init_module",
                                        "finit_module",
                                        "delete_module",
                                        "kexec_load",
                                        "kexec_file_load",
                                        "reboot",
                                        "swapon",
                                        "swapoff",
                                        "acct",
                                        "quotactl",
                                        "name_to_handle_at",
                                        "open_by_handle_at",
                                        "mount_setattr",
                                        "move_mount",
                                        "open_tree",
                                        "fsopen",
                                        "fsmount",
                                        "fsconfig",
                                        "fspick"};

std::string install_filter(bool landlock, bool programs) {
  Filter f;
  if (!f.ctx()) return "seccomp_init failed";
  const uint64_t self = static_cast<uint64_t>(getpid());
  const char* net = "network access";
  for (const char* name : {"socketpair", "connect", "bind", "listen", "accept", "accept4"})
    f.trap(name, net);
  // A local (AF_UNIX) socket fails with EACCES instead: the C library's user and host lookups
  // (getpwuid_r and friends) first try nscd's socket and fall back to the files when that fails.
  // glog's static initialiser makes one, so `import torch` in a Python kernel's process made
  // one. Without a socket no connect() is reached; the other families are trapped.
  f.trap("socket", net, {arg_cmp(0, SCMP_CMP_NE, AF_UNIX)});
  f.fail("socket", EACCES, {arg_cmp(0, SCMP_CMP_EQ, AF_UNIX)});
  const char* spawn = "starting a program";
  if (!programs) {
    for (const char* name : {"execve", "execveat", "fork", "vfork"}) f.trap(name, spawn);
    // Threads are clone(CLONE_THREAD | ...); any other clone makes a process.
    f.trap("clone", spawn, {arg_cmp(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
  }
  f.fail("clone3", ENOSYS);
  const char* other = "touching another process";
  f.trap("kill", other, {arg_cmp(0, SCMP_CMP_NE, self)});
  f.trap("tgkill", other, {arg_cmp(0, SCMP_CMP_NE, self)});
  f.trap("rt_sigqueueinfo", other, {arg_cmp(0, SCMP_CMP_NE, self)});
  f.trap("rt_tgsigqueueinfo", other, {arg_cmp(0, SCMP_CMP_NE, self)});
  f.trap("prlimit64", other, {arg_cmp(0, SCMP_CMP_NE, 0)});
  for (const char* name : {"tkill", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open",
                           "pidfd_send_signal", "pidfd_getfd", "kcmp"})
    f.trap(name, other);
  // A new SIGSYS action fails with EINVAL (as for SIGKILL), so the sandbox's handler stays and
  // every trapped call still kills the process with its note. Failing instead of trapping lets
  // code that installs crash handlers for every fatal signal run on: LLVM (in Triton's compiler,
  // every first launch of a Triton kernel) sets SIGSYS among them and ignores the result.
  // Reading the disposition (a NULL action, as CPython's signal module does) is allowed.
  f.fail("rt_sigaction", EINVAL, {arg_cmp(0, SCMP_CMP_EQ, SIGSYS), arg_cmp(1, SCMP_CMP_NE, 0)});
  const char* escape = "a privileged or sandbox-escaping call";
  for (const char* name : kEscapeCalls) f.trap(name, escape);
  if (!landlock) {
    // Without Landlock no write reaches the file system (the scratch folder included).
    const char* write = "writing files";
    for (uint64_t bit : {uint64_t{O_WRONLY}, uint64_t{O_RDWR}, uint64_t{O_CREAT}, uint64_t{O_TRUNC},
                         uint64_t{O_APPEND}}) {
      f.trap("open", write, {arg_cmp(1, SCMP_CMP_MASKED_EQ, bit, bit)});
      f.trap("openat", write, {arg_cmp(2, SCMP_CMP_MASKED_EQ, bit, bit)});
    }
    f.fail("openat2", ENOSYS);
    for (const char* name :
         {"creat",   "unlink",   "unlinkat", "rename", "renameat", "renameat2", "mkdir",
          "mkdirat", "rmdir",    "link",     "linkat", "symlink",  "symlinkat", "truncate",
          "chmod",   "fchmodat", "chown",    "lchown", "fchownat", "mknod",     "mknodat"})
      f.trap(name, write);
  }
  if (!f.ok()) return f.error();
  // Threads the process may already have get the filter too.
  seccomp_attr_set(f.ctx(), SCMP_FLTATR_CTL_TSYNC, 1);
  int rc = seccomp_load(f.ctx());
  if (rc < 0) return fmt::format("seccomp_load: {}", std::strerror(-rc));
  return "";
}

}  // namespace

int landlock_abi_version() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : static_cast<int>(v);
}

std::string sandbox_description() {
  const scmp_version* v = seccomp_version();
  std::string s = v ? fmt::format("seccomp (libseccomp {}.{}.{})", v->major, v->minor, v->micro)
                    : std::string("seccomp");
  int abi = landlock_abi_version();
  s += abi > 0 ? fmt::format(", landlock ABI {}", abi)
               : std::string(", no landlock (every file write is refused)");
  return s + ", rlimits (memory, CPU time, file size)";
}

std::string enter_sandbox(const SandboxOptions& o, const std::function<std::string()>& between) {
  if (o.scratch_root.empty()) return "no scratch folder given";
  if (count_threads() > 1)
    return "the sandbox must be entered before the process starts threads; it has " +
           thread_names();
  std::string scratch = fmt::format("{}/worker-{}", o.scratch_root, getpid());
  if (mkdir(scratch.c_str(), 0700) != 0 && errno != EEXIST)
    return fmt::format("cannot create the scratch folder {}: {}", scratch, std::strerror(errno));
  setenv("TMPDIR", scratch.c_str(), 1);
  std::vector<std::string> writable{scratch};
  if (!g_jit_cache_key.empty()) {
    const std::string caches = o.scratch_root + "/jit-cache";
    const std::string cache = caches + "/" + g_jit_cache_key;
    for (const std::string& d : {caches, cache})
      if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
        return fmt::format("cannot create the JIT cache folder {}: {}", d, std::strerror(errno));
    setenv("CRUCIBLE_JIT_CACHE", cache.c_str(), 1);
    writable.push_back(cache);
  }
  std::string err = set_limits(o);
  if (err.empty()) err = install_handlers();
  if (!err.empty()) return err;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fmt::format("prctl(PR_SET_NO_NEW_PRIVS): {}", std::strerror(errno));
  int abi = landlock_abi_version();
  if (abi > 0) {
    err = restrict_writes(writable, abi);
    if (!err.empty()) return err;
  }
  if (between) {
    err = between();
    if (!err.empty()) return err;
  }
  // Programs only where Landlock limits what they may be (allow_programs_in_sandbox).
  err = install_filter(abi > 0, abi > 0 && !g_program_dirs.empty());
  if (!err.empty()) return err;
  g_sandboxed = true;
  sandbox_job_started();
  return "";
}

void allow_programs_in_sandbox(std::vector<std::string> exec_dirs) {
  g_program_dirs = std::move(exec_dirs);
}

void share_jit_cache_in_sandbox(std::string key) { g_jit_cache_key = std::move(key); }

std::string jit_cache_key(const std::string& backend, const std::string& op) {
  auto clean = [](const std::string& s) {
    std::string out = s;
    for (char& c : out)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    return out;
  };
  std::string key = clean(backend) + "--" + clean(op);  // never "." or ".."
  // A folder name has at most 255 bytes (a kernel folder's path can be long): a long key keeps
  // its end (the op) and ends with a hash of the whole (FNV-1a).
  if (key.size() > 200) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    key = fmt::format("{}-{:016x}", key.substr(key.size() - 160), h);
  }
  return key;
}

bool sandbox_entered() { return g_sandboxed; }

void sandbox_job_started() {
  if (!g_sandboxed || g_cpu_seconds_per_job <= 0) return;
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return;
  double used = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  struct rlimit cur;
  if (getrlimit(RLIMIT_CPU, &cur) != 0) return;
  rlim_t soft = static_cast<rlim_t>(std::ceil(used + g_cpu_seconds_per_job));
  if (cur.rlim_max != RLIM_INFINITY && soft > cur.rlim_max) soft = cur.rlim_max;
  struct rlimit lim = {soft, cur.rlim_max};
  setrlimit(RLIMIT_CPU, &lim);
}

// The compile sandbox.

namespace {

// struct landlock_ruleset_attr as of Landlock ABI 6 (the system's header may be older): its size
// tells the kernel which fields are there.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
constexpr uint64_t kLandlockNetBindTcp = 1ULL << 0, kLandlockNetConnectTcp = 1ULL << 1;
constexpr uint64_t kLandlockScopeAbstractUnix = 1ULL << 0, kLandlockScopeSignal = 1ULL << 1;

// Every file-system right the Landlock ABI `abi` knows.
uint64_t fs_rights(int abi) {
  uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1: execute ... make_sym
  if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return r;
}

// Reads beneath the given folders, executes beneath the toolchain, writes beneath the cache
// entry only; with ABI 4 no TCP, with ABI 6 no signals to processes outside the compile and no
// abstract Unix sockets.
std::string restrict_compile_files(const CompileSandboxOptions& o, int abi) {
  const uint64_t all = fs_rights(abi);
  const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  const uint64_t exec = read | LANDLOCK_ACCESS_FS_EXECUTE;
  const uint64_t file_mask = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                             LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                             LANDLOCK_ACCESS_FS_IOCTL_DEV;
  const uint64_t write = all & ~(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                                 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                                 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_IOCTL_DEV);
  RulesetAttr attr = {all, abi >= 4 ? kLandlockNetBindTcp | kLandlockNetConnectTcp : 0,
                      abi >= 6 ? kLandlockScopeAbstractUnix | kLandlockScopeSignal : 0};
  const size_t size = abi >= 6   ? sizeof(RulesetAttr)
                      : abi >= 4 ? 2 * sizeof(uint64_t)
                                 : sizeof(uint64_t);
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (fd < 0) return fmt::format("landlock_create_ruleset: {}", std::strerror(errno));
  auto allow = [&](const std::string& path, uint64_t access, bool must_exist) -> std::string {
    int at = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (at < 0) {
      if (!must_exist && errno == ENOENT) return "";
      return fmt::format("cannot open {}: {}", path, std::strerror(errno));
    }
    struct stat st;
    if (fstat(at, &st) == 0 && !S_ISDIR(st.st_mode)) access &= file_mask;
    struct landlock_path_beneath_attr rule;
    std::memset(&rule, 0, sizeof rule);
    rule.allowed_access = access & all;
    rule.parent_fd = at;
    long rc = syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    close(at);
    if (rc != 0) return fmt::format("landlock_add_rule({}): {}", path, std::strerror(err));
    return "";
  };
  std::string err;
  for (const std::string& d : o.exec_dirs)
    if (err.empty()) err = allow(d, exec, false);
  for (const std::string& d : o.read_dirs)
    if (err.empty()) err = allow(d, read, true);
  for (const std::string& f : o.read_files)
    if (err.empty()) err = allow(f, LANDLOCK_ACCESS_FS_READ_FILE, false);
  if (err.empty())
    err = allow("/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE, false);
  if (err.empty()) err = allow(o.write_dir, write, true);
  for (const std::string& d : o.extra_write_dirs)
    if (err.empty()) err = allow(d, write, false);
  if (err.empty() && syscall(SYS_landlock_restrict_self, fd, 0) != 0)
    err = fmt::format("landlock_restrict_self: {}", std::strerror(errno));
  close(fd);
  return err;
}

// The compiler's seccomp filter: calls fail (the compiler reports an error) instead of killing it.
std::string install_compile_filter() {
  Filter f;
  if (!f.ctx()) return "seccomp_init failed";
  for (const char* name :
       {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"})
    f.fail(name, EACCES);
  for (const char* name : {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
                           "io_uring_setup", "io_uring_enter", "io_uring_register"})
    f.fail(name, EPERM);
  for (const char* name : kEscapeCalls) f.fail(name, EPERM);
  if (!f.ok()) return f.error();
  int rc = seccomp_load(f.ctx());
  if (rc < 0) return fmt::format("seccomp_load: {}", std::strerror(-rc));
  return "";
}

bool set_limit(int resource, rlim_t value) {
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < value)
    value = cur.rlim_max;
  struct rlimit lim = {value, value};
  return setrlimit(resource, &lim) == 0;
}

}  // namespace

std::vector<std::string> system_toolchain_dirs() {
  std::vector<std::string> out;
  for (const char* d : {"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"}) {
    struct stat st;
    if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(d);
  }
  return out;
}

std::string compile_sandbox_description() {
  int abi = landlock_abi_version();
  if (abi <= 0)
    return "seccomp (no network), no landlock (the compiler may read and write every file the "
           "user can)";
  return fmt::format(
      "landlock ABI {} (reads: the kernel folder, the toolchain and include folders; writes: the "
      "cache entry{}), seccomp (no network)",
      abi, abi >= 6 ? "; no signals outside the compile" : "");
}

std::string enter_compile_sandbox(const CompileSandboxOptions& o) {
  if (o.write_dir.empty()) return "no folder to write given";
  struct rlimit core = {0, 0};
  if (setrlimit(RLIMIT_CORE, &core) != 0)
    return fmt::format("setrlimit(RLIMIT_CORE): {}", std::strerror(errno));
  if (o.file_size_limit > 0 && !set_limit(RLIMIT_FSIZE, static_cast<rlim_t>(o.file_size_limit)))
    return fmt::format("setrlimit(RLIMIT_FSIZE): {}", std::strerror(errno));
  if (o.address_space_limit > 0 &&
      !set_limit(RLIMIT_AS, static_cast<rlim_t>(o.address_space_limit)))
    return fmt::format("setrlimit(RLIMIT_AS): {}", std::strerror(errno));
  if (o.cpu_seconds > 0 && !set_limit(RLIMIT_CPU, static_cast<rlim_t>(std::ceil(o.cpu_seconds))))
    return fmt::format("setrlimit(RLIMIT_CPU): {}", std::strerror(errno));
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fmt::format("prctl(PR_SET_NO_NEW_PRIVS): {}", std::strerror(errno));
  if (int abi = landlock_abi_version(); abi > 0) {
    std::string err = restrict_compile_files(o, abi);
    if (!err.empty()) return err;
  }
  return install_compile_filter();
}

std::string sandbox_unexplained_sigsys() {
  return "sandbox: blocked a system call made with signals blocked (how system(), popen() and "
         "posix_spawn() start a program)";
}

std::string probe_sandbox(const SandboxOptions& o) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return fmt::format("fork: {}", std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    std::string err = enter_sandbox(o);
    if (!err.empty()) {
      ssize_t k = write(fds[1], err.data(), err.size());
      (void)k;
    }
    _exit(err.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (;;) {
    ssize_t k = read(fds[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    msg.append(buf, static_cast<size_t>(k));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!msg.empty()) return msg;
  if (WIFSIGNALED(status))
    return fmt::format("the probe process was killed by {}", signal_name(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the probe process failed";
  return "";
}

ScratchRoot::ScratchRoot() : owner_pid_(getpid()) {
  std::error_code ec;
  std::string base = std::filesystem::temp_directory_path(ec).string();
  if (ec || base.empty()) base = "/tmp";
  std::string tmpl = base + "/crucible-sandbox-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    input_error(base, fmt::format("cannot create the sandbox's scratch folder: {}; set TMPDIR to "
                                  "a writable folder",
                                  std::strerror(errno)));
  path_ = buf.data();
}

ScratchRoot::~ScratchRoot() {
  if (getpid() != owner_pid_ || path_.empty()) return;
  remove_tree(path_);
}

}  // namespace crucible
