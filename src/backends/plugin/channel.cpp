// Frames over a UNIX stream socket, with one optional descriptor per frame.
#include "backends/plugin/channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace crucible {

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Reads exactly n bytes; the first read may bring a descriptor.
FrameStatus read_all(int fd, char* p, size_t n, int* received_fd) {
  bool first = true;
  while (n > 0) {
    ssize_t k;
    if (first) {
      first = false;
      iovec iov{p, n};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      k = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
      if (k > 0) {
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
          if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
          size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
          for (size_t i = 0; i < count; ++i) {
            int got;
            std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (received_fd && *received_fd < 0)
              *received_fd = got;
            else
              ::close(got);
          }
        }
      }
    } else {
      k = ::read(fd, p, n);
    }
    if (k < 0) {
      if (errno == EINTR) continue;
      return FrameStatus::Broken;
    }
    if (k == 0) return FrameStatus::Closed;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return FrameStatus::Ok;
}

}  // namespace

bool send_frame(int sock, uint32_t tag, const std::string& payload, int pass_fd) {
  const uint32_t head[2] = {tag, static_cast<uint32_t>(payload.size())};
  if (pass_fd < 0)
    return write_all(sock, reinterpret_cast<const char*>(head), sizeof head) &&
           write_all(sock, payload.data(), payload.size());
  iovec iov{const_cast<uint32_t*>(head), sizeof head};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass_fd, sizeof pass_fd);
  ssize_t k;
  do {
    k = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (k < 0 && errno == EINTR);
  if (k != static_cast<ssize_t>(sizeof head)) return false;
  return write_all(sock, payload.data(), payload.size());
}

FrameStatus recv_frame(int sock, uint32_t tag, size_t max_bytes, std::string* payload,
                       int* received_fd) {
  if (received_fd) *received_fd = -1;
  uint32_t head[2] = {0, 0};
  FrameStatus st = read_all(sock, reinterpret_cast<char*>(head), sizeof head, received_fd);
  if (st != FrameStatus::Ok) return st;
  if (head[0] != tag) return FrameStatus::BadTag;
  const uint32_t len = head[1];
  if (len > max_bytes) return FrameStatus::TooLarge;
  payload->resize(len);
  return len == 0 ? FrameStatus::Ok : read_all(sock, payload->data(), len, nullptr);
}

}  // namespace crucible
