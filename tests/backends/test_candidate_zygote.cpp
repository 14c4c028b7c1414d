// The candidate zygote (src/backends/plugin/candidate_zygote.h): candidate processes forked by a
// process that forked from the worker earlier. They start from the worker as it was when the
// zygote forked (what the worker did since -- for real, starting CUDA -- is not in them), their
// parent is the zygote, and the worker still learns how each one ended (an exit status, the
// signal that killed it) and shares a note page with it. The kernel folders' Python kernels go
// through the zygote too, so their tests (test_python_folder.cpp) run it end to end.
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "backends/plugin/candidate_zygote.h"

namespace crucible {
namespace {

int g_worker_state = 0;  // what the worker changes after the zygote forked

struct Page {
  int fd = -1;
  char* p = nullptr;
  Page() {
    fd = memfd_create("zygote-test-note", MFD_CLOEXEC);
    EXPECT_EQ(ftruncate(fd, 4096), 0);
    p = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  }
  ~Page() {
    munmap(p, 4096);
    close(fd);
  }
};

struct Pair {
  int sv[2];
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0); }
  ~Pair() {
    close(sv[0]);
    close(sv[1]);
  }
};

// In the candidate: writes what it sees into the note page, answers one byte on its channel,
// then ends as its op says.
void candidate(const ZygoteSpawn& z, int sock, int out_fd, char* note, size_t size, pid_t parent) {
  std::snprintf(note, size, "op=%s device=%d tag=%u state=%d parent_ok=%d out=%d", z.op.c_str(),
                z.cuda_device, z.tag, g_worker_state, getppid() == parent ? 1 : 0,
                write(out_fd, "printed", 7) == 7 ? 1 : 0);
  char c = 'x';
  if (write(sock, &c, 1) != 1) _exit(3);
  if (z.op == "segv") {
    signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would report and exit instead
    raise(SIGSEGV);
  }
  _exit(z.op == "exit7" ? 7 : 0);
}

TEST(CandidateZygote, ChildrenStartFromTheWorkerAsItWasWhenTheZygoteForked) {
  g_worker_state = 1;
  CandidateZygote zygote(candidate);
  g_worker_state = 2;  // after the fork: the candidate processes must not see it
  Page note;
  Pair chan;
  const int out = memfd_create("zygote-test-out", MFD_CLOEXEC);
  ZygoteSpawn z;
  z.op = "exit7";
  z.cuda_device = 3;
  z.tag = 77;
  const pid_t pid = zygote.spawn(z, chan.sv[1], out, note.fd, 4096);
  ASSERT_GT(pid, 0);
  char c = 0;
  ASSERT_EQ(read(chan.sv[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  const int status = zygote.wait(pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_STREQ(note.p, "op=exit7 device=3 tag=77 state=1 parent_ok=1 out=1");
  // The candidate is not this process's child: its parent is the zygote.
  EXPECT_LT(waitpid(pid, nullptr, WNOHANG), 0);
  char printed[8] = {};
  EXPECT_EQ(pread(out, printed, 7, 0), 7);
  EXPECT_STREQ(printed, "printed");
  close(out);
}

TEST(CandidateZygote, TheWorkerLearnsTheSignalThatKilledACandidate) {
  CandidateZygote zygote(candidate);
  for (int round = 0; round < 3; ++round) {  // the zygote serves one request after another
    Page note;
    Pair chan;
    const int out = memfd_create("zygote-test-out", MFD_CLOEXEC);
    ZygoteSpawn z;
    z.op = round == 1 ? "segv" : "exit7";
    const pid_t pid = zygote.spawn(z, chan.sv[1], out, note.fd, 4096);
    char c = 0;
    ASSERT_EQ(read(chan.sv[0], &c, 1), 1);
    const int status = zygote.wait(pid);
    if (round == 1) {
      ASSERT_TRUE(WIFSIGNALED(status)) << status;
      EXPECT_EQ(WTERMSIG(status), SIGSEGV);
    } else {
      ASSERT_TRUE(WIFEXITED(status)) << status;
      EXPECT_EQ(WEXITSTATUS(status), 7);
    }
    close(out);
  }
}

TEST(CandidateZygote, AWaitForAProcessItDidNotStartAnswersMinusOne) {
  auto zygote = std::make_unique<CandidateZygote>(candidate);
  Page note;
  Pair chan;
  const int out = memfd_create("zygote-test-out", MFD_CLOEXEC);
  ZygoteSpawn z;
  z.op = "exit7";
  const pid_t pid = zygote->spawn(z, chan.sv[1], out, note.fd, 4096);
  EXPECT_TRUE(WIFEXITED(zygote->wait(pid)));
  // A wait for a process the zygote never started answers -1 rather than blocking.
  EXPECT_EQ(zygote->wait(getpid()), -1);
  close(out);
}

}  // namespace
}  // namespace crucible
