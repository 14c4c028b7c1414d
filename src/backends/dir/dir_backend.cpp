// The kernel-folder backend: scan, compile (once per process, inherited by forked workers),
// decide each library's entry point, and wrap the guarded kernel backend.
#include "backends/dir/dir_backend.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "backends/delegating_backend.h"
#include "backends/dir/elf_symbols.h"
#include "backends/dir/kernel_compiler.h"
#include "backends/dir/kernel_folder.h"
#include "backends/plugin/cuda_runtime.h"
#include "backends/plugin/kernel_library.h"
#include "backends/python/python_kernel.h"
#include "crucible/core/error.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

// One op of a folder after compiling: where its kernel is, or why there is none.
struct BuiltKernel {
  std::string op;
  std::string origin;   // "relu.default/relu.default.cpp"
  std::string library;  // the cached .so
  std::string symbol;   // the kernel function; empty: the plugin entry point lists it
  std::string python;   // a Python kernel: its source (run in the candidate process, not compiled)
  std::string failure;  // non-empty: the compile_error message of every case of the op
  bool cuda = false;    // a .cu source: its kernels run on CUDA and get device tensors
};

struct FolderBuild {
  std::string folder;
  std::string root;  // the folder's absolute path with a trailing '/'
  std::vector<BuiltKernel> kernels;
  std::vector<std::string> ignored;
  std::string compiler;
  int compiled = 0, cached = 0, failed = 0, python = 0;
};

// How much of the compiler's output a case's detail quotes (compile.log keeps 4 KiB).
constexpr size_t kQuoteLimit = 600;

// The length of the valid UTF-8 sequence at s[i] (0: not valid).
size_t utf8_length(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  return n;
}

// The compiler's output as a quotation in crucible's words: the kernel folder's path left out
// (the compiler names files by absolute path), control characters and invalid UTF-8 shown as
// \xNN, the quotation marks « » written << >> (the quoted text cannot end the quotation), and at
// most kQuoteLimit bytes.
std::string quote_compiler_output(std::string text, const std::string& folder, size_t total) {
  if (!folder.empty())
    for (size_t p = text.find(folder); p != std::string::npos; p = text.find(folder, p))
      text.erase(p, folder.size());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string q;
  size_t i = 0;
  for (; i < text.size() && q.size() < kQuoteLimit;) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t n = utf8_length(text, i);
    if (n == 2 && c == 0xC2 && (text[i + 1] == '\xAB' || text[i + 1] == '\xBB')) {
      q += text[i + 1] == '\xAB' ? "<<" : ">>";
    } else if (n == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      q += fmt::format("\\x{:02x}", c);
      n = 1;
    } else {
      q.append(text, i, n);
    }
    i += n;
  }
  std::string s = "\u00ab" + q + "\u00bb";
  const size_t left = text.size() - i + (total > text.size() ? total - text.size() : 0);
  if (left > 0) s += fmt::format(" [{} more bytes]", left);
  return s;
}

std::string compile_failure(const BuiltKernel& k, const dir::CompileOutcome& o,
                            const std::string& folder) {
  const std::string said = "the compiler said (kernel source text, not crucible's): ";
  std::string msg;
  if (!o.problem.empty()) {
    msg = fmt::format("{} did not compile: {}", k.origin, o.problem);
    if (o.output_bytes > 0)
      msg += "; before that " + said + quote_compiler_output(o.diagnostics, folder, o.output_bytes);
  } else {
    msg = fmt::format("{} did not compile; {}{}", k.origin, said,
                      quote_compiler_output(o.diagnostics, folder, o.output_bytes));
  }
  if (!o.command.empty()) msg += "\ncommand: " + o.command;
  if (!o.log.empty()) msg += "\nfull log: " + o.log;
  return msg;
}

// Which function of a compiled library is the op's kernel (read from its symbol table).
void pick_entry(BuiltKernel& k) {
  std::vector<std::string> symbols = dir::exported_symbols(k.library);
  auto has = [&](const std::string& s) {
    return std::find(symbols.begin(), symbols.end(), s) != symbols.end();
  };
  const std::vector<std::string> names = dir::kernel_impl_symbols(k.op);
  std::vector<std::string> found;
  for (const std::string& n : names)
    if (has(n)) found.push_back(n);
  if (found.size() > 1) {
    k.failure = fmt::format("{} defines both {} and {}; keep one", k.origin, found[0], found[1]);
  } else if (found.size() == 1) {
    k.symbol = found[0];
  } else if (!has(CRUCIBLE_PLUGIN_ENTRY_SYMBOL)) {
    std::string hint;
    for (const std::string& s : symbols)
      for (const std::string& n : names)
        if (s.starts_with("_Z") && s.find(n) != std::string::npos)
          hint = fmt::format(" It defines {} as a C++ function: declare it extern \"C\".", n);
    k.failure = fmt::format(
        "{} defines no kernel for {}: define extern \"C\" int32_t {}(crucible_call* call) (or "
        "{}, or {}), or register it with CRUCIBLE_KERNEL from crucible/kernel.hpp.{}",
        k.origin, k.op, names[0], names[1], names[2], hint);
  }
}

std::shared_ptr<const FolderBuild> build_folder(const std::string& folder) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const FolderBuild>> memo;
  std::lock_guard<std::mutex> lock(mu);
  std::error_code ec;
  const std::string key = fs::absolute(folder, ec).lexically_normal().string();
  if (auto it = memo.find(key); it != memo.end()) return it->second;

  auto b = std::make_shared<FolderBuild>();
  b->folder = folder;
  dir::FolderScan scan = dir::scan_kernel_folder(folder);
  b->ignored = scan.ignored;
  if (scan.kernels.empty()) {
    std::string why;
    for (const std::string& s : scan.ignored) why += "\n  " + s;
    usage_error(
        fmt::format("dir:{}: no kernel found (expected sub-folders such as "
                    "relu.default/relu.default.cpp or relu/relu.py; see docs/kernel-folders.md){}",
                    folder, why));
  }
  dir::CompilerConfig cfg = dir::default_compiler_config();
  const std::string root = (fs::absolute(folder, ec) / "").string();
  b->root = root;
  // Python kernels are not compiled: each runs in its op's candidate process.
  std::vector<dir::CompileJob> jobs;
  for (const dir::KernelSource& s : scan.kernels)
    if (!s.python) jobs.push_back({s.source, s.cuda});
  std::vector<dir::CompileOutcome> outcomes = dir::compile_kernels(jobs, cfg);
  size_t next = 0;
  for (const dir::KernelSource& s : scan.kernels) {
    BuiltKernel k;
    k.op = s.op;
    k.origin = s.folder + "/" + fs::path(s.source).filename().string();
    k.cuda = s.cuda;
    if (s.python) {
      k.python = s.source;
      b->python++;
      b->kernels.push_back(std::move(k));
      continue;
    }
    const dir::CompileOutcome& o = outcomes[next++];
    if (b->compiler.empty() && !s.cuda) b->compiler = o.compiler;
    if (o.ok) {
      k.library = o.library;
      (o.cached ? b->cached : b->compiled)++;
      pick_entry(k);
    } else {
      k.failure = compile_failure(k, o, root);
    }
    if (!k.failure.empty()) b->failed++;
    b->kernels.push_back(std::move(k));
  }

  const std::string where = "crucible: dir:" + folder + ": ";
  for (const std::string& s : b->ignored)
    std::fprintf(stderr, "%signored %s\n", where.c_str(), s.c_str());
  for (const BuiltKernel& k : b->kernels)
    if (!k.failure.empty())
      std::fprintf(stderr,
                   "%s%s has no usable kernel; its cases are recorded as compile_error (%s)\n",
                   where.c_str(), k.op.c_str(), k.origin.c_str());
  if (b->compiled > 0)
    std::fprintf(stderr, "%scompiled %d kernel%s into %s (%d found there already)\n", where.c_str(),
                 b->compiled, b->compiled == 1 ? "" : "s", cfg.cache_dir.c_str(), b->cached);
  std::fflush(stderr);
  memo[key] = b;
  return b;
}

class DirBackend final : public DelegatingBackend {
 public:
  DirBackend(std::string name, std::shared_ptr<const FolderBuild> build,
             const DirBackendOptions& options)
      : name_(std::move(name)), build_(std::move(build)) {
    KernelBackendOptions opts;
    opts.version = version();
    opts.library_per_op = true;
    auto b = build_;
    // A Python kernel's JIT compiler (Triton) starts programs: its candidate process may, from
    // the toolchain and the Python environment only (docs/sandbox.md, "Python kernels"). What it
    // compiles is kept for the op's later processes (the other workers, the timing phase).
    opts.prepare_candidate = [b, backend = name_](const std::string& op) {
      for (const BuiltKernel& k : b->kernels)
        if (k.op == op && !k.python.empty()) {
          allow_programs_in_sandbox(python_program_dirs());
          share_jit_cache_in_sandbox(jit_cache_key(backend, op));
        }
    };
    // A .cu kernel's candidate process starts CUDA (on the first visible device) before it
    // enters the sandbox; its kernels receive device tensors (docs/gpu.md). So does a Python
    // kernel's when the folder's Python kernels run on CUDA (`--backend flag_gems`).
    const int python_device = options.python_cuda_device;
    opts.cuda_device = [b, python_device](const std::string& op) {
      for (const BuiltKernel& k : b->kernels) {
        if (k.op != op) continue;
        if (k.cuda) return 0;
        if (!k.python.empty() && python_device >= 0) return python_device;
      }
      return -1;
    };
    // Candidate processes that may start CUDA (.cu kernels; Python kernels, which may use
    // torch.cuda) are forked by a zygote that forked before the worker could start CUDA.
    bool python = false;
    for (const BuiltKernel& k : b->kernels) {
      opts.zygote = opts.zygote || k.cuda || !k.python.empty();
      python = python || !k.python.empty();
    }
    // The zygote imports Python and PyTorch once for every Python kernel's process it forks,
    // unless CRUCIBLE_PYTHON_ZYGOTE=0 (each process imports them itself: docs/kernel-folders.md).
    const char* z = std::getenv("CRUCIBLE_PYTHON_ZYGOTE");
    if (python && !(z && std::string(z) == "0")) opts.zygote_hooks = python_zygote_hooks();
    // Runs in the candidate process of one op: loads that op's library only.
    inner_ = make_kernel_backend(
        name_,
        [b](const std::string& op) {
          std::vector<LoadedKernel> out;
          for (const BuiltKernel& k : b->kernels) {
            if (k.op != op) continue;
            if (!k.failure.empty()) compile_error(k.failure);
            if (!k.python.empty()) {
              out.push_back(load_python_kernel(
                  {k.op, k.python, k.origin, b->root, dir::kernel_impl_symbols(k.op)}));
              continue;
            }
            if (!k.symbol.empty()) {
              LoadedKernel lk = load_kernel_symbol(k.library, k.symbol, k.op);
              lk.origin = k.origin;
              out.push_back(std::move(lk));
              continue;
            }
            std::vector<std::string> others;
            for (LoadedKernel& lk : load_plugin_library(k.library, nullptr)) {
              if (lk.op != k.op || !out.empty()) {
                others.push_back(lk.op);
                continue;
              }
              lk.origin = k.origin;
              out.push_back(std::move(lk));
            }
            if (out.empty()) {
              std::string list;
              for (const std::string& o : others) list += (list.empty() ? "" : ", ") + o;
              compile_error(fmt::format("{} registers no kernel for {} with CRUCIBLE_KERNEL{}",
                                        k.origin, k.op,
                                        list.empty() ? "" : " (it registers " + list + ")"));
            }
          }
          return out;
        },
        opts);
  }

  std::string name() const override { return name_; }
  std::string version() const override {
    std::string v =
        fmt::format("{} kernel{} ({} did not compile), {}, compiled in a sandbox: {}",
                    build_->kernels.size(), build_->kernels.size() == 1 ? "" : "s", build_->failed,
                    build_->compiler.empty() ? "no C++ compiler" : build_->compiler,
                    compile_sandbox_description());
    if (build_->python > 0)
      v += fmt::format("; {} Python kernel{} run by {}", build_->python,
                       build_->python == 1 ? "" : "s", python_kernel_runtime());
    return v;
  }
  Device device() const override { return Device::cpu(); }
  bool untrusted() const override { return true; }

  // Known from the folder without loading anything (the parent process never loads kernels).
  bool has_op(const OpDef& op) const override { return find(op) != nullptr; }
  std::vector<DType> supported_dtypes(const OpDef& op) const override {
    return has_op(op) ? op.dtypes : std::vector<DType>{};
  }
  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    const BuiltKernel* k = find(op);
    if (!k) {
      if (why)
        *why = fmt::format("the kernel folder {} has no kernel for {}", build_->folder, op.name);
      return false;
    }
    if (!k->failure.empty()) return true;  // run() reports the compile error
    return inner_->supports(op, args, why);
  }
  Values run(const OpDef& op, const Values& args) override {
    const BuiltKernel* k = find(op);
    if (k && !k->failure.empty()) compile_error(k->failure);
    return inner_->run(op, args);
  }

 private:
  const BuiltKernel* find(const OpDef& op) const {
    for (const BuiltKernel& k : build_->kernels)
      if (k.op == op.name) return &k;
    return nullptr;
  }

  std::string name_;
  std::shared_ptr<const FolderBuild> build_;
};

}  // namespace

// Asked of a short-lived child (this process forks workers, which could not start CUDA after it
// had); workers forked later inherit the answer.
std::string cuda_start_problem() {
  static const std::string problem = [] {
    int fds[2];
    if (pipe(fds) != 0) return std::string("cannot make a pipe to ask whether CUDA starts");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      ::close(fds[0]);
      const std::string why = CudaRuntime::start(0);
      const char* p = why.data();
      for (size_t left = why.size(); left > 0;) {
        const ssize_t n = ::write(fds[1], p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
      _exit(0);
    }
    ::close(fds[1]);
    std::string why;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) why.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    if (pid < 0) return std::string("cannot fork to ask whether CUDA starts");
    if (!WIFEXITED(status)) return std::string("the process that started CUDA died");
    return why;
  }();
  return problem;
}

std::unique_ptr<Backend> make_dir_backend(const std::string& spec) {
  std::string folder = spec.substr(spec.find(':') + 1);
  DirBackendOptions options;
  // dir:cuda:<folder>: the folder's Python kernels run on the first visible CUDA device and
  // receive device tensors (Triton kernels need them), as its .cu kernels always do.
  if (folder.rfind("cuda:", 0) == 0) {
    folder = folder.substr(5);
    options.python_cuda_device = 0;
  }
  if (folder.empty())
    usage_error(
        "dir: needs a folder: --backend dir:<folder>, or dir:cuda:<folder> for Python kernels "
        "on CUDA (see docs/kernel-folders.md)");
  if (options.python_cuda_device >= 0) {
    if (!sandbox_entered())
      if (const std::string why = cuda_start_problem(); !why.empty())
        usage_error(
            fmt::format("--backend {}: its Python kernels run on CUDA, and CUDA does not "
                        "start here: {} (use --backend dir:{} to run them on the CPU)",
                        spec, why, folder));
  }
  return std::make_unique<DirBackend>(spec, build_folder(folder), options);
}

std::unique_ptr<Backend> make_dir_backend(const std::string& name, const std::string& folder,
                                          const DirBackendOptions& options) {
  return std::make_unique<DirBackend>(name, build_folder(folder), options);
}

}  // namespace crucible
