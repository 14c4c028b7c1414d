// The candidate zygote: requests over a datagram socket pair, descriptors passed with them.
#include "backends/plugin/candidate_zygote.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "crucible/core/error.h"
#include "sandbox/inherited_fds.h"

namespace crucible {

namespace {

constexpr char kSpawn = 'S';
constexpr char kWait = 'W';
constexpr size_t kMaxRequest = 4096;

// A request: its kind, then fixed fields, then the op's name.
struct SpawnHeader {
  uint32_t tag;
  int32_t cuda_device;
  uint64_t note_size;
};

bool send_message(int sock, const std::string& bytes, const int* fds, int nfds) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(nfds));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(nfds));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(nfds));
  }
  ssize_t n;
  while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(bytes.size());
}

// One message and up to three descriptors (which the caller then owns); false at the end.
bool recv_message(int sock, std::string* bytes, std::vector<int>* fds) {
  bytes->assign(kMaxRequest, '\0');
  iovec iov{bytes->data(), bytes->size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  bytes->resize(static_cast<size_t>(n));
  fds->clear();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds->push_back(fd);
    }
  }
  return true;
}

bool send_int(int sock, int64_t v) {
  return send_message(sock, std::string(reinterpret_cast<const char*>(&v), sizeof(v)), nullptr, 0);
}

int64_t recv_int(int sock) {
  std::string bytes;
  std::vector<int> fds;
  if (!recv_message(sock, &bytes, &fds) || bytes.size() != sizeof(int64_t)) {
    for (int fd : fds) ::close(fd);
    return -1;
  }
  int64_t v;
  std::memcpy(&v, bytes.data(), sizeof(v));
  return v;
}

}  // namespace

CandidateZygote::CandidateZygote(CandidateMain main, ZygoteHooks hooks) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    internal_error(std::string("socketpair for the candidate zygote: ") + std::strerror(errno));
  const pid_t worker = getpid();
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ < 0)
    internal_error(std::string("cannot fork the candidate zygote: ") + std::strerror(errno));
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != worker) _exit(0);
    ::close(sv[0]);
    sock_ = sv[1];
    serve(main, hooks);
  }
  ::close(sv[1]);
  sock_ = sv[0];
}

CandidateZygote::~CandidateZygote() {
  if (sock_ >= 0) ::close(sock_);  // the zygote reads the end of its channel and exits
  if (pid_ > 0) {
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void CandidateZygote::serve(const CandidateMain& main, const ZygoteHooks& hooks) {
  // Only the channel stays open (a worker's pipes held here would hide the worker's end from
  // the pool), and a memory checker's descriptors (inherited_fds.h); standard input, output
  // and error stay for the candidate processes to replace.
  if (const int channel = first_unkept_fd(3); sock_ != channel) {
    dup2(sock_, channel);
    sock_ = channel;
  }
  close_fds_from(3, {sock_});
  if (hooks.warm) hooks.warm();
  const pid_t self = getpid();
  std::string req;
  std::vector<int> fds;
  while (recv_message(sock_, &req, &fds)) {
    if (req.size() >= 1 + sizeof(SpawnHeader) && req[0] == kSpawn && fds.size() == 3) {
      SpawnHeader h;
      std::memcpy(&h, req.data() + 1, sizeof(h));
      ZygoteSpawn z;
      z.tag = h.tag;
      z.cuda_device = h.cuda_device;
      z.op = req.substr(1 + sizeof(h));
      if (hooks.before_fork) hooks.before_fork();
      const pid_t child = fork();
      if (child == 0) {
        if (hooks.after_fork_child) hooks.after_fork_child();
        void* page = mmap(nullptr, h.note_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0);
        if (page == MAP_FAILED) _exit(127);
        ::close(fds[2]);
        main(z, fds[0], fds[1], static_cast<char*>(page), h.note_size, self);
        _exit(127);  // main never returns
      }
      if (hooks.after_fork_parent) hooks.after_fork_parent();
      for (int fd : fds) ::close(fd);
      if (!send_int(sock_, child < 0 ? -static_cast<int64_t>(errno) : child)) break;
    } else if (req.size() == 1 + sizeof(int32_t) && req[0] == kWait) {
      int32_t pid;
      std::memcpy(&pid, req.data() + 1, sizeof(pid));
      int status = 0;
      pid_t got;
      while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
      }
      if (!send_int(sock_, got == pid ? status : -1)) break;
    } else {
      for (int fd : fds) ::close(fd);
      if (!send_int(sock_, -EINVAL)) break;
    }
  }
  _exit(0);
}

pid_t CandidateZygote::spawn(const ZygoteSpawn& z, int sock, int out_fd, int note_fd,
                             size_t note_size) {
  SpawnHeader h{z.tag, z.cuda_device, note_size};
  std::string req(1, kSpawn);
  req.append(reinterpret_cast<const char*>(&h), sizeof(h));
  req += z.op;
  const int fds[3] = {sock, out_fd, note_fd};
  if (!send_message(sock_, req, fds, 3))
    internal_error(
        "the candidate zygote is gone (it could not take a request to start a "
        "candidate process)");
  const int64_t pid = recv_int(sock_);
  if (pid == -1) internal_error("the candidate zygote is gone (it did not answer a request)");
  if (pid < 0)
    internal_error(std::string("the candidate zygote cannot fork a candidate process: ") +
                   std::strerror(static_cast<int>(-pid)));
  return static_cast<pid_t>(pid);
}

int CandidateZygote::wait(pid_t pid) {
  std::string req(1, kWait);
  const auto p = static_cast<int32_t>(pid);
  req.append(reinterpret_cast<const char*>(&p), sizeof(p));
  if (!send_message(sock_, req, nullptr, 0)) return -1;
  return static_cast<int>(recv_int(sock_));
}

}  // namespace crucible
