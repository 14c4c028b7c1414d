// `command:<program>`: the prompt on the program's standard input, the answer on its standard
// output, within the timeout (then the program and its children are killed).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "llm/provider_internal.h"

namespace crucible::llm {

namespace {

class CommandProvider : public Provider {
 public:
  explicit CommandProvider(const ProviderConfig& cfg)
      : cfg_(cfg), program_(cfg.spec.substr(8)), gate_(cfg.concurrency) {
    // A program that exits without reading its whole prompt must not kill crucible.
    signal(SIGPIPE, SIG_IGN);
  }
  std::string name() const override { return cfg_.spec; }
  std::string model() const override { return cfg_.model.empty() ? program_ : cfg_.model; }

  Completion complete(const std::string& prompt) override {
    GateHold hold(gate_);
    Completion c;
    c.tries = 1;
    const auto start = std::chrono::steady_clock::now();
    std::string out, err;
    int status = 0;
    const std::string problem = run(prompt, out, err, status);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    c.raw = out;
    if (!problem.empty()) {
      c.error = fmt::format("command '{}': {}", program_, problem);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      c.error =
          WIFSIGNALED(status)
              ? fmt::format("command '{}' was killed by signal {}", program_, WTERMSIG(status))
              : fmt::format("command '{}' exited with status {}", program_, WEXITSTATUS(status));
      if (!err.empty()) c.error += ": " + clip(err, 300);
    } else if (out.empty()) {
      c.error = fmt::format("command '{}' printed nothing", program_);
    } else {
      c.text = out;
      c.ok = true;
    }
    return c;
  }

 private:
  // Runs the program; "" when it ran to its end (its status in `status`), else why not.
  std::string run(const std::string& input, std::string& out, std::string& err, int& status) {
    int in_p[2], out_p[2], err_p[2];
    if (pipe2(in_p, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    if (pipe2(out_p, O_CLOEXEC) != 0) {
      close(in_p[0]);
      close(in_p[1]);
      return std::string("pipe: ") + std::strerror(errno);
    }
    if (pipe2(err_p, O_CLOEXEC) != 0) {
      for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1]}) close(fd);
      return std::string("pipe: ") + std::strerror(errno);
    }
    const std::string model_env = "CRUCIBLE_LLM_MODEL=" + model();
    const pid_t pid = fork();
    if (pid < 0) {
      for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1]}) close(fd);
      return std::string("fork: ") + std::strerror(errno);
    }
    if (pid == 0) {
      setpgid(0, 0);
      dup2(in_p[0], 0);
      dup2(out_p[1], 1);
      dup2(err_p[1], 2);
      putenv(const_cast<char*>(model_env.c_str()));
      execl("/bin/sh", "sh", "-c", program_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in_p[0]);
    close(out_p[1]);
    close(err_p[1]);
    int in_fd = in_p[1];
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
    size_t written = 0;
    if (input.empty()) {
      close(in_fd);
      in_fd = -1;
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(cfg_.timeout_s);
    bool out_open = true, err_open = true, timed_out = false;
    char buf[65536];
    while (out_open || err_open) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      pollfd fds[3];
      nfds_t n = 0;
      int idx_out = -1, idx_err = -1, idx_in = -1;
      if (out_open) fds[idx_out = static_cast<int>(n++)] = {out_p[0], POLLIN, 0};
      if (err_open) fds[idx_err = static_cast<int>(n++)] = {err_p[0], POLLIN, 0};
      if (in_fd >= 0) fds[idx_in = static_cast<int>(n++)] = {in_fd, POLLOUT, 0};
      if (poll(fds, n, static_cast<int>(std::min<long long>(left, 1000))) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (idx_in >= 0 && fds[idx_in].revents) {
        const ssize_t w = write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // EPIPE
        if (written >= input.size()) {
          close(in_fd);
          in_fd = -1;
        }
      }
      for (auto [idx, fd, open, sink] : {std::tuple{idx_out, out_p[0], &out_open, &out},
                                         std::tuple{idx_err, err_p[0], &err_open, &err}}) {
        if (idx < 0 || !fds[idx].revents) continue;
        const ssize_t r = read(fd, buf, sizeof buf);
        if (r > 0)
          sink->append(buf, static_cast<size_t>(r));
        else if (r == 0 || (errno != EAGAIN && errno != EINTR))
          *open = false;
      }
    }
    if (in_fd >= 0) close(in_fd);
    close(out_p[0]);
    close(err_p[0]);
    if (timed_out) kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
      return fmt::format("no answer within {} s; the program was killed", cfg_.timeout_s);
    return "";
  }

  ProviderConfig cfg_;
  std::string program_;
  CallGate gate_;
};

}  // namespace

std::unique_ptr<Provider> make_command_provider(const ProviderConfig& cfg) {
  return std::make_unique<CommandProvider>(cfg);
}

}  // namespace crucible::llm
