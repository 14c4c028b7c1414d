// Candidate processes: spawning, requests, and dying with them.
#include "backends/plugin/candidate_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "backends/plugin/candidate_protocol.h"
#include "backends/plugin/channel.h"
#include "backends/plugin/kernel_call.h"
#include "backends/plugin/shared_arena.h"
#include "sandbox/inherited_fds.h"

namespace crucible {

namespace {

constexpr size_t kNotePage = 4096;
constexpr size_t kOutputKept = 2048;

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

// In the forked child, before anything else: only the channel and the output file stay open
// (and a memory checker's descriptors, inherited_fds.h). Returns the channel's descriptor.
int become_clean_child(int sock, int out_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_UNBLOCK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  const int channel = first_unkept_fd(3);
  if (sock != channel) dup2(sock, channel);
  close_fds_from(3, {channel});
  // The kernels' thread pools wait passively between calls (a parked pool is allowed; a
  // spinning one would look like a thread left at work), unless the user chose otherwise.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  return channel;
}

}  // namespace

void CandidateProcess::child_main(const KernelHostSetup& setup, const CandidateIsolation& isolation,
                                  int sock, int out_fd, char* note, size_t note_size, uint32_t tag,
                                  pid_t parent) {
  const int channel = become_clean_child(sock, out_fd, parent);
  if (isolation.adopt_note_page) isolation.adopt_note_page(note, note_size);
  KernelHostSetup s = setup;
  s.enter_sandbox = isolation.enter_sandbox;
  s.call_started = isolation.call_started;
  run_kernel_host(channel, tag, s);
}

CandidateProcess::CandidateProcess(const KernelHostSetup& setup,
                                   const CandidateIsolation& isolation, CandidateZygote* zygote)
    : isolation_(isolation), zygote_(zygote) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    internal_error(std::string("socketpair: ") + std::strerror(errno));
  out_fd_ = memfd_create("crucible-kernel-output", MFD_CLOEXEC);
  if (out_fd_ < 0) internal_error(std::string("memfd_create: ") + std::strerror(errno));
  // The note page is shared with the candidate process: anonymous memory it inherits, or
  // (through the zygote, which forked before this page existed) a memory file it maps.
  int note_fd = -1;
  if (zygote_) {
    note_fd = memfd_create("crucible-kernel-note", MFD_CLOEXEC);
    if (note_fd < 0 || ftruncate(note_fd, kNotePage) != 0)
      internal_error(std::string("memfd_create for a note page: ") + std::strerror(errno));
  }
  void* page =
      zygote_ ? mmap(nullptr, kNotePage, PROT_READ | PROT_WRITE, MAP_SHARED, note_fd, 0)
              : mmap(nullptr, kNotePage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) internal_error(std::string("mmap: ") + std::strerror(errno));
  note_ = static_cast<char*>(page);
  tag_ = static_cast<uint32_t>(unpredictable_u64()) | 1u;
  if (zygote_) {
    ZygoteSpawn z;
    z.op = setup.op;
    z.cuda_device = setup.cuda_device;
    z.tag = tag_;
    try {
      pid_ = zygote_->spawn(z, sv[1], out_fd_, note_fd, kNotePage);
    } catch (...) {
      ::close(note_fd);
      ::close(sv[0]);
      ::close(sv[1]);
      throw;
    }
    ::close(note_fd);
  } else {
    const pid_t parent = getpid();
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0)
      internal_error(std::string("cannot fork a candidate process: ") + std::strerror(errno));
    if (pid_ == 0) child_main(setup, isolation_, sv[1], out_fd_, note_, kNotePage, tag_, parent);
  }
  ::close(sv[1]);
  sock_ = sv[0];

  // The bare round trip, before any kernel code exists in the process.
  const std::string ping(1, static_cast<char>(HostRequest::Ping));
  double best = 1e9;
  for (int i = 0; i < 16; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string back = request(ping);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (back != ping) kernel_fault("the candidate process answered a ping with something else");
  }
  bare_round_trip_ = best;

  // CUDA: the timed region around no call, against the trusted clock.
  cuda_ = setup.cuda_device >= 0;
  if (cuda_) {
    const std::string empty(1, static_cast<char>(HostRequest::EmptySample));
    double gap = 0;
    for (int i = 0; i < 16; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::string back = request(empty);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      uint64_t ns = 0;
      try {
        WireReader r(back);
        ns = r.get<uint64_t>();
        r.expect_done();
      } catch (const WireError&) {
        kernel_fault("the candidate process answered an empty timed request with something else");
      }
      gap = std::max(gap, wall - bare_round_trip_ - static_cast<double>(ns) * 1e-9);
    }
    empty_gap_ = gap;
  }

  // Load.
  std::string ready = request(std::string(1, '\0'));
  try {
    WireReader r(ready);
    const uint8_t kind = r.get<uint8_t>();
    load_error_ = r.str(kMaxMessageChars, "load error");
    load_changes_ = r.str(kMaxMessageChars, "load changes");
    load_error_kind_ = kind <= static_cast<uint8_t>(ErrorKind::Internal)
                           ? static_cast<ErrorKind>(kind)
                           : ErrorKind::Input;
    const uint32_t n = r.count(1 << 16, "kernels");
    for (uint32_t i = 0; i < n; ++i) {
      std::string op = r.str(256, "op name");
      ops_[op] = r.get<uint8_t>() != 0;
    }
    r.expect_done();
  } catch (const WireError& e) {
    kernel_fault(std::string("the candidate process sent a malformed report of its kernels: ") +
                 e.what());
  }
}

CandidateProcess::~CandidateProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    reap();
  }
  if (sock_ >= 0) ::close(sock_);
  if (out_fd_ >= 0) ::close(out_fd_);
  if (note_) munmap(note_, kNotePage);
}

std::string CandidateProcess::request(const std::string& payload, int pass_fd, size_t max_reply) {
  if (!send_frame(sock_, tag_, payload, pass_fd)) died();
  std::string reply;
  switch (recv_frame(sock_, tag_, max_reply, &reply, nullptr)) {
    case FrameStatus::Ok:
      return reply;
    case FrameStatus::TooLarge:
      kernel_fault("the candidate process sent a reply larger than any call can need");
    case FrameStatus::BadTag:
      kernel_fault(
          "the candidate process sent bytes that are not a reply (did the kernel write into "
          "its channel?)");
    case FrameStatus::Closed:
    case FrameStatus::Broken:
      died();
  }
  died();
}

int CandidateProcess::reap() {
  if (zygote_) return zygote_->wait(pid_);
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  return got == pid_ ? status : -1;
}

void CandidateProcess::died() {
  const int status = reap();
  const bool got = status >= 0;
  pid_ = -1;
  std::string note(note_, strnlen(note_, kNotePage));
  std::string output = take_output();
  std::string words;
  if (!note.empty()) words += "; its last note: «" + note + "»";
  if (!output.empty())
    words += "; it printed (the kernel's words, not crucible's): «" + output + "»";
  if (got && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const std::string detail =
        fmt::format("the kernel's process was killed by {}{}", signal_text(sig), words);
    if (isolation_.set_note) isolation_.set_note(detail);
    // Die the same way: the worker pool records the case as crashed with this signal.
    signal(sig, SIG_DFL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, nullptr);
    raise(sig);
    _exit(128 + sig);
  }
  kernel_fault(fmt::format("the kernel's process exited with status {} during the call{}",
                           got && WIFEXITED(status) ? WEXITSTATUS(status) : -1, words));
}

void CandidateProcess::flush_l2() {
  const std::string back = request(std::string(1, static_cast<char>(HostRequest::FlushL2)));
  try {
    WireReader r(back);
    const uint8_t ok = r.get<uint8_t>();
    const std::string why = r.str(kMaxMessageChars, "flush error");
    r.expect_done();
    if (!ok) kernel_fault("the device failed between calls: " + why);
  } catch (const WireError& e) {
    kernel_fault(std::string("the candidate process sent a malformed reply to an L2 flush: ") +
                 e.what());
  }
}

void CandidateProcess::timed_outputs(uint64_t arena_id, uint64_t arena_size,
                                     const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                     unsigned char poison) {
  WireWriter w;
  w.put<uint8_t>(static_cast<uint8_t>(HostRequest::TimedOutputs));
  w.put<uint64_t>(arena_id);
  w.put<uint64_t>(arena_size);
  w.put<uint8_t>(poison);
  w.put<uint32_t>(static_cast<uint32_t>(ranges.size()));
  for (const auto& [off, len] : ranges) {
    w.put<uint64_t>(off);
    w.put<uint64_t>(len);
  }
  const std::string back = request(w.take());
  try {
    WireReader r(back);
    const uint8_t ok = r.get<uint8_t>();
    const std::string why = r.str(kMaxMessageChars, "device error");
    r.expect_done();
    if (!ok) kernel_fault("the device failed between timed calls: " + why);
  } catch (const WireError& e) {
    kernel_fault(
        std::string("the candidate process sent a malformed reply to a timed call's outputs: ") +
        e.what());
  }
}

bool CandidateProcess::knows_arena(uint64_t id) const {
  for (uint64_t a : arenas_)
    if (a == id) return true;
  return false;
}

void CandidateProcess::saw_arena(uint64_t id) {
  // The candidate process keeps its three newest arenas mapped; remember fewer.
  arenas_[3] = arenas_[2];
  arenas_[2] = arenas_[1];
  arenas_[1] = arenas_[0];
  arenas_[0] = id;
  arenas_[3] = 0;
}

std::string CandidateProcess::take_output() {
  struct stat st {};
  if (fstat(out_fd_, &st) != 0 || st.st_size <= out_read_) return "";
  const off_t n = st.st_size - out_read_;
  std::string s(static_cast<size_t>(std::min<off_t>(n, kOutputKept)), '\0');
  ssize_t k = pread(out_fd_, s.data(), s.size(), out_read_);
  s.resize(k > 0 ? static_cast<size_t>(k) : 0);
  out_read_ = st.st_size;
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') c = '?';
  if (n > static_cast<off_t>(kOutputKept))
    s += fmt::format(" ... ({} more bytes)", n - kOutputKept);
  return s;
}

}  // namespace crucible
