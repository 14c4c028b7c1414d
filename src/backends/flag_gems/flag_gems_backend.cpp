// `--backend flag_gems`: the probe's table, the synthesized kernel folder, and the backend that
// wraps it (see flag_gems_backend.h).
#include "backends/flag_gems/flag_gems_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/delegating_backend.h"
#include "backends/dir/dir_backend.h"
#include "backends/dir/kernel_folder.h"
#include "backends/flag_gems/flag_gems_table.h"
#include "backends/python/python_kernel.h"
#include "crucible/core/error.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

// How long importing FlagGems may take in the probe (Triton and torch load; FlagGems reads its
// tuning tables).
constexpr int kProbeSeconds = 300;

struct Prepared {
  flag_gems::Table table;
  std::unique_ptr<ScratchRoot> scratch;  // holds the synthesized kernel folder
  std::string folder;
  std::vector<std::string> kernels;         // catalog ops, in table order
  std::vector<std::string> not_in_catalog;  // FlagGems keys
};

// A Python string literal (JSON's escapes are Python's for these strings).
std::string py_literal(const std::string& s) { return nlohmann::json(s).dump(); }

// Text for a comment line: printable ASCII only (a name with a line break cannot end the
// comment).
std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s) out += c >= 0x20 && c < 0x7F ? c : '?';
  return out;
}

std::string kernel_source(const flag_gems::TableEntry& e, const std::string& vendor) {
  const std::string impl = dir::kernel_impl_symbols(e.op)[0];
  std::string s = fmt::format(
      "# Synthesized by crucible for --backend flag_gems: the kernel of {} is the function\n"
      "# FlagGems' op table registers for {} ({}), called directly (not through ATen's\n"
      "# dispatcher), with the op's arguments as ATen passes them.\n"
      "import os\n\n"
      "# FlagGems writes the code it generates and its autotuning results under\n"
      "# FLAGGEMS_CACHE_DIR (else ~/.flaggems); a candidate process writes only in the op's\n"
      "# shared JIT cache (kept for the op's later processes) and its scratch folder.\n"
      "os.environ[\"FLAGGEMS_CACHE_DIR\"] = (\n"
      "    os.path.join(os.environ[\"CRUCIBLE_JIT_CACHE\"], \"flaggems\")\n"
      "    if os.environ.get(\"CRUCIBLE_JIT_CACHE\")\n"
      "    else os.path.join(os.environ.get(\"TMPDIR\") or \"/tmp\", \"flaggems-cache\"))\n\n"
      "# FlagGems makes a multiprocessing.Lock at import (a POSIX semaphore in /dev/shm, which\n"
      "# the sandbox keeps closed: a file shared with every process of the machine). Its lock\n"
      "# orders benchmarks between processes; a candidate process is one process, so a\n"
      "# thread lock means the same here.\n"
      "import multiprocessing\n"
      "import threading\n"
      "multiprocessing.Lock = lambda *args, **kwargs: threading.Lock()\n",
      e.op, comment_text(py_literal(e.key)), comment_text(e.function));
  // The vendor the probe detected, so that FlagGems does not start programs to detect it again.
  if (!vendor.empty())
    s += fmt::format("os.environ.setdefault(\"GEMS_VENDOR\", {})\n", py_literal(vendor));
  s += flag_gems::kTableReaderSource;
  s += fmt::format(
      "\n_KEY = {}\n"
      "_fn = None\n"
      "for _key, _f in _crucible_flag_gems_table():\n"
      "    if _key == _KEY:\n"
      "        _fn = _f\n"
      "if _fn is None:\n"
      "    raise LookupError(\"FlagGems' op table, read in this process, has no entry %r (the \"\n"
      "                      \"probe at run start had one)\" % _KEY)\n\n\n"
      "def {}(*args, **kwargs):\n"
      "    return _fn(*args, **kwargs)\n",
      py_literal(e.key), impl);
  return s;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.good())
    usage_error(
        fmt::format("--backend flag_gems: cannot write {}; set TMPDIR to a "
                    "writable folder",
                    path));
}

std::string describe(const flag_gems::Table& t) {
  return fmt::format("FlagGems {} from {} ({}, device {}{})", t.version, t.location, t.python,
                     t.device, t.vendor.empty() ? "" : ", vendor " + t.vendor);
}

// PYTHONPATH's relative entries made absolute (against the working folder crucible started in),
// so that the probe and every kernel's candidate process find the same FlagGems wherever they
// run (PYTHONPATH=FlagGems/src).
void absolute_python_path() {
  const char* pp = std::getenv("PYTHONPATH");
  if (!pp || !*pp) return;
  std::string out, entry;
  std::stringstream ss(pp);
  std::error_code ec;
  while (std::getline(ss, entry, ':')) {
    if (!entry.empty() && entry[0] != '/') {
      const fs::path a = fs::absolute(entry, ec);
      if (!ec) entry = a.lexically_normal().string();
    }
    out += (out.empty() ? "" : ":") + entry;
  }
  if (out != pp) setenv("PYTHONPATH", out.c_str(), 1);
}

// Once per process and interpreter: the backend is created in the process that keeps the
// results (which checks the run's backends) before any worker is forked, so the workers inherit
// the table and the synthesized folder rather than probing again. The folder is removed when that
// process exits.
std::shared_ptr<const Prepared> prepare() {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Prepared>> memo;
  std::lock_guard<std::mutex> lock(mu);
  const std::string python = python_interpreter();
  if (auto it = memo.find(python); it != memo.end()) return it->second;

  absolute_python_path();
  auto p = std::make_shared<Prepared>();
  p->scratch = std::make_unique<ScratchRoot>();
  p->table = flag_gems::read_table(python, p->scratch->path(), kProbeSeconds);
  const flag_gems::Table& t = p->table;
  // FlagGems on CUDA; a package whose `device` is "cpu" (a stand-in for FlagGems' table, as
  // crucible's tests use) runs on host tensors.
  if (t.device != "cuda" && t.device != "cpu")
    usage_error(
        fmt::format("--backend flag_gems: {} runs on '{}'; crucible runs FlagGems' "
                    "kernels on CUDA devices only",
                    describe(t), t.device));
  if (t.device == "cuda" && t.cuda_devices <= 0)
    usage_error(fmt::format(
        "--backend flag_gems: no CUDA device is visible: torch.cuda.device_count() is 0 in {} "
        "(the probe that imported {}). FlagGems' kernels are Triton kernels for CUDA: run on a "
        "machine with a GPU and a CUDA PyTorch, and check CUDA_VISIBLE_DEVICES",
        python, t.location));

  p->folder = p->scratch->path() + "/flag_gems-kernels";
  std::error_code ec;
  fs::create_directories(p->folder, ec);
  std::map<std::string, const flag_gems::TableEntry*> by_op;
  for (const flag_gems::TableEntry& e : t.entries) {
    if (e.op.empty()) {
      if (std::find(p->not_in_catalog.begin(), p->not_in_catalog.end(), e.key) ==
          p->not_in_catalog.end())
        p->not_in_catalog.push_back(e.key);
      continue;
    }
    if (by_op.count(e.op)) continue;  // a second key for the same overload ("abs.default")
    by_op[e.op] = &e;
    p->kernels.push_back(e.op);
  }
  for (const auto& [op, e] : by_op) {
    const std::string name = op.substr(5);  // "add.Tensor"
    const std::string dir = p->folder + "/" + name;
    fs::create_directories(dir, ec);
    write_file(dir + "/" + name + ".py", kernel_source(*e, t.device == "cuda" ? t.vendor : ""));
  }

  std::string list;
  for (const std::string& k : p->not_in_catalog) list += (list.empty() ? "" : ", ") + k;
  std::fprintf(stderr,
               "crucible: flag_gems: %s: %zu of its %zu registrations name catalog ops and are "
               "its kernels\n",
               describe(t).c_str(), p->kernels.size(), t.entries.size());
  if (!p->not_in_catalog.empty())
    std::fprintf(stderr,
                 "crucible: flag_gems: %zu registered by FlagGems, not in the catalog: %s\n",
                 p->not_in_catalog.size(), list.c_str());
  std::fflush(stderr);
  memo[python] = p;
  return p;
}

class FlagGemsBackend final : public DelegatingBackend {
 public:
  FlagGemsBackend(std::string name, std::shared_ptr<const Prepared> p)
      : name_(std::move(name)), prepared_(std::move(p)) {
    if (prepared_->kernels.empty())
      usage_error(
          fmt::format("--backend flag_gems: {} registers no op of crucible's catalog "
                      "({} registrations, none an ATen overload the catalog has)",
                      describe(prepared_->table), prepared_->table.entries.size()));
    DirBackendOptions opts;
    opts.python_cuda_device = prepared_->table.device == "cuda" ? 0 : -1;
    inner_ = make_dir_backend(name_, prepared_->folder, opts);
  }

  std::string name() const override { return name_; }
  // In the run's manifest (manifest.json, the report): what ran, and which of FlagGems'
  // registrations are not in the catalog.
  std::string version() const override {
    std::string v = fmt::format("{}: {} kernels; {} registered by FlagGems, not in the catalog",
                                describe(prepared_->table), prepared_->kernels.size(),
                                prepared_->not_in_catalog.size());
    if (!prepared_->not_in_catalog.empty()) {
      std::string list;
      for (const std::string& k : prepared_->not_in_catalog) list += (list.empty() ? "" : ", ") + k;
      v += " (" + list + ")";
    }
    return v + "; run by " + python_kernel_runtime();
  }
  Device device() const override { return Device::cpu(); }
  bool untrusted() const override { return true; }

  bool has_op(const OpDef& op) const override { return inner_->has_op(op); }
  std::vector<DType> supported_dtypes(const OpDef& op) const override {
    return inner_->supported_dtypes(op);
  }
  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    if (!inner_->has_op(op)) {
      if (why) *why = fmt::format("FlagGems registers no kernel for {}", op.name);
      return false;
    }
    return inner_->supports(op, args, why);
  }

 private:
  std::string name_;
  std::shared_ptr<const Prepared> prepared_;
};

}  // namespace

std::unique_ptr<Backend> make_flag_gems_backend(const std::string& spec) {
  if (spec != "flag_gems")
    usage_error(
        fmt::format("--backend {}: write --backend flag_gems (FlagGems comes from the "
                    "Python environment of $CRUCIBLE_PYTHON, else {})",
                    spec, python_interpreter()));
  return std::make_unique<FlagGemsBackend>(spec, prepare());
}

std::string flag_gems_state() {
  try {
    ScratchRoot scratch;
    const flag_gems::Table t =
        flag_gems::read_table(python_interpreter(), scratch.path(), kProbeSeconds);
    size_t kernels = 0;
    for (const flag_gems::TableEntry& e : t.entries)
      if (!e.op.empty()) ++kernels;
    std::string s = fmt::format("ready: {}: {} of its {} registrations name catalog ops",
                                describe(t), kernels, t.entries.size());
    if (t.device == "cuda")
      s += t.cuda_devices > 0 ? fmt::format("; {} CUDA device{} visible", t.cuda_devices,
                                            t.cuda_devices == 1 ? "" : "s")
                              : "; but no CUDA device is visible: runs stop with exit status 2";
    return s;
  } catch (const Error& e) {
    std::string why = e.what();
    const std::string prefix = "--backend flag_gems: ";
    if (why.starts_with(prefix)) why = why.substr(prefix.size());
    return "not ready: " + why;
  }
}

}  // namespace crucible
