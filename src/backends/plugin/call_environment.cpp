// Snapshots of the process state around a kernel call.
#include "backends/plugin/call_environment.h"

#include <dirent.h>
#include <fenv.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace crucible {

namespace {

#if defined(__x86_64__) || defined(__i386__)
uint32_t read_mxcsr() {
  uint32_t v;
  __asm__ volatile("stmxcsr %0" : "=m"(v));
  return v;
}
uint16_t read_x87_control() {
  uint16_t v;
  __asm__ volatile("fnstcw %0" : "=m"(v));
  return v;
}
#else
uint32_t read_mxcsr() { return 0; }
uint16_t read_x87_control() { return 0; }
#endif

std::string read_small_file(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<int> thread_ids() {
  std::vector<int> ids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ids.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A thread's state letter and, where readable, the system call it waits in (-1: running).
std::pair<char, long> thread_state(int tid) {
  std::string stat = read_small_file(fmt::format("/proc/self/task/{}/stat", tid).c_str());
  char state = '?';
  if (auto p = stat.rfind(')'); p != std::string::npos && p + 2 < stat.size()) state = stat[p + 2];
  std::string sc = read_small_file(fmt::format("/proc/self/task/{}/syscall", tid).c_str());
  long nr = -2;
  if (!sc.empty()) {
    if (sc.starts_with("running"))
      nr = -1;
    else
      nr = std::strtol(sc.c_str(), nullptr, 10);
  }
  return {state, nr};
}

bool waiting_for_work(long nr) {
  return nr == SYS_futex || nr == SYS_read || nr == SYS_poll || nr == SYS_ppoll ||
         nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == SYS_select || nr == SYS_pselect6
#ifdef SYS_futex_waitv
         || nr == SYS_futex_waitv
#endif
      ;
}

// Whether a thread is parked the way a thread pool parks its workers between calls (blocked
// waiting for work). A pool worker may still be spinning down (OpenBLAS yields for a while):
// up to 100 ms are given. A thread asleep on a timer (the way a late writer waits) is not parked.
bool parked(int tid) {
  int asleep = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto [state, nr] = thread_state(tid);
    if (state == 'Z' || state == 'X' || state == '?') return true;  // gone
    if ((state == 'S' || state == 'D') && waiting_for_work(nr)) return true;
    if (nr == SYS_nanosleep || nr == SYS_clock_nanosleep) {
      if (++asleep >= 10) return false;
    } else {
      asleep = 0;
    }
    usleep(1000);
  }
  return false;
}

}  // namespace

CallEnvironment capture_call_environment(bool threads_only) {
  CallEnvironment e;
  if (threads_only) {
    e.threads = thread_ids();
    return e;
  }
  e.mxcsr = read_mxcsr();
  e.x87_control = read_x87_control();
  e.rounding = fegetround();
  for (int sig = 1; sig < NSIG; ++sig) {
    // SIGSYS belongs to the sandbox, which stops any change of it (and any query: seccomp cannot
    // tell a query from a change).
    if (sig == SIGSYS) {
      e.signal_handlers.push_back(0);
      e.signal_handlers.push_back(0);
      continue;
    }
    struct sigaction sa {};
    if (sigaction(sig, nullptr, &sa) != 0) continue;
    e.signal_handlers.push_back(reinterpret_cast<uint64_t>(sa.sa_handler));
    e.signal_handlers.push_back(static_cast<uint64_t>(sa.sa_flags));
  }
  for (int which : {ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF}) {
    itimerval v{};
    getitimer(which, &v);
    const bool armed = v.it_value.tv_sec != 0 || v.it_value.tv_usec != 0 ||
                       v.it_interval.tv_sec != 0 || v.it_interval.tv_usec != 0;
    e.itimers += armed ? "1" : "0";
  }
  e.posix_timers = read_small_file("/proc/self/timers");
  e.threads = thread_ids();
  char buf[4096];
  if (getcwd(buf, sizeof buf)) e.cwd = buf;
  mode_t m = umask(022);
  umask(m);
  e.umask = m;
  return e;
}

std::string call_environment_changes(const CallEnvironment& before, const CallEnvironment& after) {
  std::vector<std::string> what;
  if ((before.mxcsr & 0xFFC0) != (after.mxcsr & 0xFFC0)) {
    std::string bits;
    const uint32_t changed = (before.mxcsr ^ after.mxcsr) & 0xFFC0;
    if (changed & 0x8000) bits += " flush-to-zero";
    if (changed & 0x0040) bits += " denormals-are-zero";
    if (changed & 0x6000) bits += " rounding mode";
    if (changed & 0x1F80) bits += " exception masks";
    what.push_back(fmt::format("the SSE control register (MXCSR {:#06x} -> {:#06x}:{})",
                               before.mxcsr, after.mxcsr, bits));
  }
  if (before.x87_control != after.x87_control || before.rounding != after.rounding)
    what.push_back("the floating-point rounding mode or precision");
  if (before.signal_handlers != after.signal_handlers) {
    std::string sigs;
    for (size_t i = 0;
         i + 1 < before.signal_handlers.size() && i + 1 < after.signal_handlers.size(); i += 2)
      if (before.signal_handlers[i] != after.signal_handlers[i] ||
          before.signal_handlers[i + 1] != after.signal_handlers[i + 1])
        sigs +=
            (sigs.empty() ? "" : ", ") + std::string(sigabbrev_np(static_cast<int>(i / 2 + 1))
                                                         ? sigabbrev_np(static_cast<int>(i / 2 + 1))
                                                         : "?");
    what.push_back("signal dispositions (SIG" + sigs + ")");
  }
  if (before.itimers != after.itimers) what.push_back("an interval timer (alarm/setitimer)");
  if (before.posix_timers != after.posix_timers) what.push_back("POSIX timers (timer_create)");
  std::vector<int> fresh;
  for (int t : after.threads)
    if (!std::binary_search(before.threads.begin(), before.threads.end(), t)) fresh.push_back(t);
  int running = 0;
  for (int t : fresh)
    if (!parked(t)) ++running;
  if (running > 0)
    what.push_back(fmt::format(
        "{} thread(s) it started still running or sleeping after it returned (a kernel may "
        "leave a pool of parked threads, not threads at work)",
        running));
  if (before.cwd != after.cwd) what.push_back("the working directory");
  if (before.umask != after.umask) what.push_back("the umask");
  if (what.empty()) return "";
  std::string s = "the kernel changed the process state and left it changed: ";
  for (size_t i = 0; i < what.size(); ++i) s += (i ? "; " : "") + what[i];
  return s;
}

void reset_floating_point_environment() {
  fesetenv(FE_DFL_ENV);
#if defined(__x86_64__) || defined(__i386__)
  uint32_t v = 0x1F80;  // all exceptions masked, round to nearest, no FTZ/DAZ
  __asm__ volatile("ldmxcsr %0" : : "m"(v));
#endif
}

}  // namespace crucible
