// The load probe: a plugin library loaded in a short-lived, sandboxed child; its description
// sent back in a small message that the parent checks byte by byte.
//
// The message: "CRPB1", then 'O' (loaded) or 'E' (an error), then
//   O: name, version, sandbox note (each a u32 length and that many bytes), the device (a u32:
//      0 CPU, 1 CUDA), a u32 count of kernels and each kernel's op name (u32 length, bytes);
//   E: the error's kind (one byte) and its text (u32 length, bytes);
// and "END". Lengths are little-endian; nothing may follow.
#include "backends/plugin/probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "backends/plugin/kernel_library.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "sandbox/death_note.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace {

constexpr char kMagic[] = "CRPB1";
constexpr char kEnd[] = "END";
constexpr size_t kMaxErrorText = 4096;

void put_u32(std::string& m, uint32_t v) {
  for (int i = 0; i < 4; ++i) m.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void put_text(std::string& m, const std::string& s, size_t max) {
  const std::string t = s.substr(0, max);
  put_u32(m, static_cast<uint32_t>(t.size()));
  m += t;
}

// Reads the untrusted message; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(const std::string& m) : m_(m) {}
  bool literal(const char* s) {
    const size_t n = std::strlen(s);
    if (m_.compare(pos_, n, s) != 0 || m_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  bool byte(uint8_t* b) {
    if (pos_ >= m_.size()) return false;
    *b = static_cast<uint8_t>(m_[pos_++]);
    return true;
  }
  bool u32(uint32_t* v) {
    if (m_.size() - pos_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i)
      *v |= static_cast<uint32_t>(static_cast<uint8_t>(m_[pos_ + static_cast<size_t>(i)]))
            << (8 * i);
    pos_ += 4;
    return true;
  }
  // A text of at most `max` bytes, each printable ASCII (or a newline where `lines`).
  bool text(size_t max, std::string* out, bool lines = false) {
    uint32_t n = 0;
    if (!u32(&n) || n > max || m_.size() - pos_ < n) return false;
    *out = m_.substr(pos_, n);
    pos_ += n;
    for (char c : *out)
      if ((c < 0x20 || c > 0x7e) && !(lines && c == '\n')) return false;
    return true;
  }
  bool at_end() const { return pos_ == m_.size(); }

 private:
  const std::string& m_;
  size_t pos_ = 0;
};

void write_all(int fd, const std::string& m) {
  size_t done = 0;
  while (done < m.size()) {
    ssize_t k = write(fd, m.data() + done, m.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    done += static_cast<size_t>(k);
  }
}

// The child: load, describe, answer, exit. Never returns.
[[noreturn]] void probe_child(const std::string& path, const PluginProbeOptions& o,
                              const std::string& scratch, int pipe_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Nothing of the parent's stays open but the answer pipe.
  const int fd = fcntl(pipe_fd, F_DUPFD_CLOEXEC, 10);
  const int null_fd = open("/dev/null", O_RDWR);
  if (fd < 0 || null_fd < 0) _exit(125);
  for (int i = 0; i < 3; ++i) dup2(null_fd, i);
  close_range(3, static_cast<unsigned>(fd) - 1, 0);
  close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  const auto cpu = static_cast<rlim_t>(std::ceil(o.timeout_s) + 1);
  struct rlimit cpu_limit = {cpu, cpu};
  setrlimit(RLIMIT_CPU, &cpu_limit);
  std::string sandbox_note = "off";
  if (o.sandbox) {
    SandboxOptions so;
    so.scratch_root = scratch;
    so.file_size_limit = size_t{64} << 20;
    sandbox_note = enter_sandbox(so);
  }
  std::string m = kMagic;
  try {
    PluginInfo info;
    std::vector<LoadedKernel> kernels = load_plugin_library(path, &info);
    m += 'O';
    put_text(m, info.name, kMaxPluginText);
    put_text(m, info.version, kMaxPluginText);
    put_text(m, sandbox_note, kMaxErrorText);
    put_u32(m, info.device.is_cpu() ? 0u : 1u);
    put_u32(m, static_cast<uint32_t>(kernels.size()));
    for (const LoadedKernel& k : kernels) put_text(m, k.op, kMaxOpName + 16);
  } catch (const Error& e) {
    m = std::string(kMagic) + 'E';
    m.push_back(static_cast<char>(e.kind()));
    put_text(m, e.what(), kMaxErrorText);
  } catch (const std::exception& e) {
    m = std::string(kMagic) + 'E';
    m.push_back(static_cast<char>(ErrorKind::Input));
    put_text(m, fmt::format("{}: loading threw {}", path, e.what()), kMaxErrorText);
  }
  m += kEnd;
  write_all(fd, m);
  _exit(0);
}

// Printable ASCII and newlines only (the error text came through the untrusted channel).
std::string printable(std::string s) {
  for (char& c : s)
    if ((c < 0x20 || c > 0x7e) && c != '\n') c = '?';
  return s;
}

void kill_child(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

PluginProbeOptions default_probe_options() {
  PluginProbeOptions o;
  if (const char* t = std::getenv("CRUCIBLE_PLUGIN_LOAD_TIMEOUT"); t && *t) {
    char* end = nullptr;
    double v = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(v > 0) || v > 3600)
      usage_error(fmt::format(
          "CRUCIBLE_PLUGIN_LOAD_TIMEOUT='{}' is not a number of seconds (0 < s <= 3600)", t));
    o.timeout_s = v;
  }
  return o;
}

PluginDescription probe_kernel_library(const std::string& path, const PluginProbeOptions& o) {
  auto fail = [&](const std::string& why) -> PluginDescription {
    input_error(path, "cannot load the plugin library: " + why);
  };
  std::optional<ScratchRoot> scratch;
  if (o.sandbox) scratch.emplace();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fail(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) probe_child(path, o, scratch ? scratch->path() : "", fds[1]);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return fail(fmt::format("fork: {}", std::strerror(errno)));
  }
  setpgid(pid, pid);

  // The answer, within the time limit.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.timeout_s);
  const std::string hang = fmt::format(
      "loading it did not finish in {:g} s (a library constructor or its entry point that does "
      "not return?); it was stopped (CRUCIBLE_PLUGIN_LOAD_TIMEOUT sets the limit)",
      o.timeout_s);
  std::string msg;
  char buf[65536];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      close(fds[0]);
      kill_child(pid);
      return fail(hang);
    }
    pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    ssize_t k = read(fds[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    msg.append(buf, static_cast<size_t>(k));
    if (msg.size() > kMaxProbeMessage) {
      close(fds[0]);
      kill_child(pid);
      return fail(fmt::format("its loading process answered more than {} bytes", kMaxProbeMessage));
    }
  }
  close(fds[0]);
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return fail(fmt::format("waitpid: {}", std::strerror(errno)));
    if (Clock::now() >= deadline) {
      kill_child(pid);
      return fail(hang);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);  // whatever the library left running
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGSYS)
      return fail(
          "the sandbox stopped it while it was being loaded: a library constructor or its entry "
          "point made a forbidden system call (network, starting a program, ...; see "
          "docs/sandbox.md)");
    if (sig == SIGXCPU) return fail(hang);
    return fail(fmt::format(
        "it crashed while being loaded ({} in a library constructor or its entry point, or "
        "while crucible read its description)",
        signal_name(sig)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(fmt::format(
        "its loading process exited with status {} before answering (a library constructor "
        "that calls exit()?)",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1));

  // Every byte of the answer is checked.
  const std::string malformed =
      "its loading process answered with malformed data (a library constructor that writes "
      "into crucible's channel?)";
  Reader in(msg);
  uint8_t tag = 0;
  if (msg.empty())
    return fail(
        "its loading process ended without answering (a library constructor that ends "
        "the process?)");
  if (!in.literal(kMagic) || !in.byte(&tag)) return fail(malformed);
  if (tag == 'E') {
    uint8_t kind = 0;
    std::string text;
    if (!in.byte(&kind) || !in.text(kMaxErrorText, &text, true) || !in.literal(kEnd) ||
        !in.at_end())
      return fail(malformed);
    text = printable(text);
    if (static_cast<ErrorKind>(kind) == ErrorKind::Unsupported)
      throw Error(ErrorKind::Unsupported, text);
    // The child's errors name the library already.
    if (text.starts_with(path + ": ")) throw Error(ErrorKind::Input, text);
    return fail(text);
  }
  if (tag != 'O') return fail(malformed);
  PluginDescription d;
  uint32_t count = 0, device = 0;
  if (!in.text(kMaxPluginText, &d.name) || !in.text(kMaxPluginText, &d.version) ||
      !in.text(kMaxErrorText, &d.sandbox) || !in.u32(&device) || device > 1 || !in.u32(&count) ||
      count < 1 || count > static_cast<uint32_t>(kMaxPluginKernels))
    return fail(malformed);
  const OpRegistry& catalog = OpRegistry::catalog();
  for (uint32_t i = 0; i < count; ++i) {
    std::string op;
    if (!in.text(kMaxOpName + 16, &op) || !catalog.find(op)) return fail(malformed);
    d.ops.push_back(std::move(op));
  }
  if (!in.literal(kEnd) || !in.at_end()) return fail(malformed);
  d.cuda = device == 1;
  return d;
}

}  // namespace crucible
