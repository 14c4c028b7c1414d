// The sandbox of workers that run untrusted kernels (plugin: and dir: backends): no network, no
// new processes, no signals or tracing of other processes, no writes outside a scratch folder,
// and limits on file size and CPU time. A kernel that tries is stopped (SIGSYS) and the case
// records why ("sandbox: blocked socket() (network access)"). See docs/sandbox.md.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace crucible {

struct SandboxOptions {
  // Each worker writes only under <scratch_root>/worker-<pid> (its TMPDIR). Must exist.
  std::string scratch_root;
  // CPU seconds one job may use (all threads together) before SIGXCPU; re-armed by
  // sandbox_job_started(). 0: no CPU limit.
  double cpu_seconds_per_job = 0;
  // The largest file a worker may write (RLIMIT_FSIZE); beyond it SIGXFSZ stops the worker.
  size_t file_size_limit = size_t{1} << 30;
};

// What the sandbox is made of on this machine, e.g. "seccomp, landlock ABI 7, rlimits".
std::string sandbox_description();

// The Landlock ABI version the running kernel offers (0: none; writes are then refused by
// seccomp, the scratch folder included).
int landlock_abi_version();

// Enters the sandbox in the calling process; call it in a freshly forked worker before any
// untrusted code is loaded and before threads are started. Irreversible. Returns "" on success,
// otherwise why the sandbox could not be set up (the process is then partly restricted and
// should exit).
//
// `between`, when given, runs after the limits and Landlock's rules are in force and before the
// seccomp filter: a device runtime that must open local sockets while it starts (CUDA binds one)
// starts there. The threads it starts inherit Landlock's rules, and the filter, synchronised to
// every thread of the process, covers them too. Its error ("" on success) is returned.
std::string enter_sandbox(const SandboxOptions& opts,
                          const std::function<std::string()>& between = {});

// For the next enter_sandbox of this process (the candidate process of a Python kernel, whose
// JIT compilers start programs: Triton's assembler and its C compiler): programs may be started,
// executable only from beneath `exec_dirs` (Landlock's execute right; nothing the process writes
// into its scratch folder can be executed), and every program started keeps every other rule (no
// network, writes only in the scratch folder, no other process touched). Without Landlock
// nothing would limit what is executed: programs then stay refused.
void allow_programs_in_sandbox(std::vector<std::string> exec_dirs);

// For the next enter_sandbox of this process (the candidate process of a JIT-compiled kernel): a
// cache folder `<scratch_root>/jit-cache/<key>` that every process of the run entering with the
// same key shares, writable as the scratch folder is and named by the environment variable
// CRUCIBLE_JIT_CACHE. The key names one backend's one op (jit_cache_key), so what a kernel's
// process leaves there (Triton's compiled kernels, an autotuner's choices) reaches later processes
// of the same kernel (the next worker, the timing phase) and no other op's or backend's. Nothing
// written there can be executed as a program; it is removed with the scratch root.
void share_jit_cache_in_sandbox(std::string key);

// The cache key of one backend's one op: the two names with every character outside
// [A-Za-z0-9._-] made '_', joined by "--"; past 200 characters, its last 160 and a hash of the
// whole (one folder name, never a path).
std::string jit_cache_key(const std::string& backend, const std::string& op);

// Whether this process has entered the worker sandbox (enter_sandbox succeeded): it can then
// start no process.
bool sandbox_entered();

// In a sandboxed worker, at the start of each job: gives the job a fresh CPU-time budget.
// A no-op outside the sandbox.
void sandbox_job_started();

// Why a sandboxed worker that died of SIGSYS without a note most likely died: a forbidden call
// made while its signals were blocked, which is how glibc starts programs (system(), popen(),
// posix_spawn()); the kernel then kills the process before the handler can name the call.
std::string sandbox_unexplained_sigsys();

// Whether enter_sandbox works here, tried in a short-lived child process: "" when it does,
// otherwise why not.
std::string probe_sandbox(const SandboxOptions& opts);

// The sandbox of one compile of a kernel source (kernel folders, `dir:`): the compiler may read
// and execute only the toolchain (`exec_dirs`), read only `read_dirs` and `read_files`, write only
// beneath `write_dir` (its TMPDIR and output folder), and may not reach the network, trace or
// signal processes outside its own compile, or make privileged calls. It may start its own
// programs (cc1plus, as, ld). See docs/sandbox.md, "The compile sandbox".
struct CompileSandboxOptions {
  std::vector<std::string> exec_dirs;         // read and execute beneath (system_toolchain_dirs())
  std::vector<std::string> read_dirs;         // read beneath: the kernel folder, include folders
  std::vector<std::string> read_files;        // read: single files (/etc/ld.so.cache)
  std::string write_dir;                      // read and write beneath; must exist
  std::vector<std::string> extra_write_dirs;  // read and write beneath (a launcher's cache)
  size_t file_size_limit = size_t{1} << 30;   // RLIMIT_FSIZE of every compiler process
  size_t address_space_limit = 0;             // RLIMIT_AS of every compiler process; 0: none
  double cpu_seconds = 0;                     // RLIMIT_CPU of every compiler process; 0: none
};

// The folders a compiler and its programs live in on this machine: /usr, /lib, /lib64, /bin,
// /sbin (those that exist).
std::vector<std::string> system_toolchain_dirs();

// `name` as found on PATH (the first executable file of that name), or "" (program_dirs.cpp).
std::string find_on_path(const std::string& name);

// Where a program's own files are when it lives outside system_toolchain_dirs(): the install
// prefix of its resolved path (`/opt/<x>` for `/opt/<x>/bin/gcc`); "" when it is among the
// system's folders or is not found. A bare name is looked up on PATH.
std::string program_prefix(const std::string& exe);

// What the compile sandbox is made of here, e.g. "landlock ABI 7 (reads: the kernel folder, the
// toolchain and include folders; writes: the cache entry), seccomp (no network)".
std::string compile_sandbox_description();

// Enters the compile sandbox in the calling process: call it in a freshly forked child right
// before it execs the compiler (the restrictions are inherited by every program the compiler
// starts). Irreversible. Returns "" on success, otherwise why it could not be set up (the child
// should then exit without running the compiler). Without Landlock the file system is not
// restricted (compile_sandbox_description() says so); the network is refused either way.
std::string enter_compile_sandbox(const CompileSandboxOptions& opts);

// A scratch root for one run's workers: a fresh folder under the temporary directory, removed
// with everything in it when this object is destroyed.
class ScratchRoot {
 public:
  ScratchRoot();
  ~ScratchRoot();
  ScratchRoot(const ScratchRoot&) = delete;
  ScratchRoot& operator=(const ScratchRoot&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int owner_pid_ = 0;
};

}  // namespace crucible
