// Reading FlagGems' op table in a probe process (see flag_gems_table.h).
#include "backends/flag_gems/flag_gems_table.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::flag_gems {

const char* const kTableReaderSource = R"PY(
def _crucible_flag_gems_table():
    """FlagGems' op table as [(key, function)], read through its own registrar class: a
    subclass whose register_impl records each entry that FlagGems' filtering keeps, where
    FlagGems would register it with torch.library. Nothing is registered with ATen."""
    import flag_gems
    base = getattr(flag_gems, "registrar", None)
    if not isinstance(base, type) or not callable(getattr(flag_gems, "enable", None)):
        raise RuntimeError(
            "%s has no enable() and registrar class; crucible reads FlagGems' op table through "
            "them" % getattr(flag_gems, "__file__", "flag_gems"))
    table = []

    class _CrucibleRecorder(base):
        def register_impl(self, key, fn):
            table.append((key, fn))

    flag_gems.enable(registrar=_CrucibleRecorder)
    return table
)PY";

namespace {

constexpr const char* kMarker = "@@crucible-flag-gems@@";

// The probe: imports flag_gems, reads its table, and prints one JSON line after kMarker (FlagGems
// may print while it imports).
std::string probe_script() {
  return std::string(R"PY(
import json
import sys
import traceback

_out = {"python": sys.executable}


def _emit():
    sys.stdout.write("\n)PY") +
         kMarker + R"PY(" + json.dumps(_out) + "\n")
    sys.stdout.flush()


def _failure(e):
    return ("".join(traceback.format_exception_only(type(e), e)).strip(),
            "".join(traceback.format_exception(type(e), e, e.__traceback__))[-1500:])


try:
    import flag_gems
except BaseException as e:
    _out["import_error"], _out["traceback"] = _failure(e)
    _emit()
    sys.exit(0)
_out["location"] = getattr(flag_gems, "__file__", None) or ""
_out["version"] = str(getattr(flag_gems, "__version__", "unknown"))
_out["device"] = str(getattr(flag_gems, "device", "cuda"))
_out["vendor"] = str(getattr(flag_gems, "vendor_name", "") or "")
)PY" + kTableReaderSource +
         R"PY(
try:
    _table = _crucible_flag_gems_table()
except BaseException as e:
    _out["table_error"], _out["traceback"] = _failure(e)
    _emit()
    sys.exit(0)


def _name(f):
    return "%s.%s" % (getattr(f, "__module__", None) or "?",
                      getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
                      or type(f).__name__)


_out["entries"] = [[str(k), _name(f)] for k, f in _table]
if _out["device"] == "cuda":
    import torch
    try:
        _out["cuda_devices"] = int(torch.cuda.device_count())
    except BaseException as e:
        _out["cuda_devices"] = 0
        _out["cuda_error"] = _failure(e)[0]
_emit()
)PY";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(std::string s, size_t n) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > n ? "[...]" + s.substr(s.size() - n) : s;
}

std::string fix(const std::string& python) {
  return fmt::format(
      "install FlagGems into that interpreter's environment ({} -m pip install flag-gems), put a "
      "FlagGems source checkout on PYTHONPATH (PYTHONPATH=<checkout>/src), or set CRUCIBLE_PYTHON "
      "to the interpreter of an environment that has it (docs/gpu.md, \"FlagGems\")",
      python);
}

}  // namespace

std::string catalog_op_of_key(const std::string& key) {
  if (key.empty()) return "";
  std::string name = key;
  if (name.starts_with("aten::")) name = name.substr(6);
  name = "aten." + name + (name.find('.') == std::string::npos ? ".default" : "");
  return OpRegistry::catalog().find(name) ? name : "";
}

Table read_table(const std::string& python, const std::string& scratch, int timeout_seconds) {
  const std::string where = "--backend flag_gems";
  const std::string out_path = scratch + "/flag-gems-probe.out";
  const std::string err_path = scratch + "/flag-gems-probe.err";
  const std::string script = probe_script();
  const std::vector<const char*> argv = {python.c_str(), "-B", "-c", script.c_str(), nullptr};

  const pid_t pid = fork();
  if (pid < 0)
    usage_error(fmt::format("{}: cannot start a process: {}", where, std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execvp(python.c_str(), const_cast<char* const*>(argv.data()));
    const int e = errno;
    (void)!write(2, "exec: ", 6);
    (void)!write(2, std::strerror(e), std::strlen(std::strerror(e)));
    _exit(127);
  }
  setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);  // the probe and anything it started
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  const std::string out = read_file(out_path), err = read_file(err_path);
  if (timed_out)
    usage_error(fmt::format("{}: importing flag_gems in {} did not finish in {} s; it printed: {}",
                            where, python, timeout_seconds, tail(out + err, 1200)));
  const size_t at = out.rfind(kMarker);
  if (at == std::string::npos) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      usage_error(
          fmt::format("{}: cannot run the Python interpreter {} ({}); set CRUCIBLE_PYTHON "
                      "to the interpreter of the environment FlagGems is installed in",
                      where, python, tail(err, 300)));
    usage_error(
        fmt::format("{}: the probe that imports flag_gems in {} {} before it read "
                    "FlagGems' table; it printed: {}",
                    where, python,
                    WIFSIGNALED(status) ? fmt::format("died of signal {}", WTERMSIG(status))
                                        : fmt::format("exited with status {}", WEXITSTATUS(status)),
                    tail(out + err, 1200)));
  }
  nlohmann::json j;
  try {
    std::string line = out.substr(at + std::strlen(kMarker));
    line = line.substr(0, line.find('\n'));
    j = nlohmann::json::parse(line);
  } catch (const std::exception& e) {
    usage_error(
        fmt::format("{}: the probe of flag_gems in {} printed a table crucible cannot "
                    "read: {}",
                    where, python, e.what()));
  }
  if (j.contains("import_error"))
    usage_error(
        fmt::format("{}: the Python interpreter {} cannot import flag_gems: {}\nTo fix: "
                    "{}.\nPython said:\n{}",
                    where, python, j.value("import_error", ""), fix(python),
                    tail(j.value("traceback", ""), 1500)));
  if (j.contains("table_error"))
    usage_error(
        fmt::format("{}: flag_gems imports in {} ({}), but its op table cannot be read: "
                    "{}\nPython said:\n{}",
                    where, python, j.value("location", ""), j.value("table_error", ""),
                    tail(j.value("traceback", ""), 1500)));
  Table t;
  t.python = python;
  t.location = j.value("location", "");
  t.version = j.value("version", "");
  t.device = j.value("device", "");
  t.vendor = j.value("vendor", "");
  t.cuda_devices = j.value("cuda_devices", 0);
  for (const auto& e : j.value("entries", nlohmann::json::array())) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_string()) continue;
    TableEntry te;
    te.key = e[0].get<std::string>();
    te.function = e[1].get<std::string>();
    te.op = catalog_op_of_key(te.key);
    t.entries.push_back(std::move(te));
  }
  return t;
}

}  // namespace crucible::flag_gems
