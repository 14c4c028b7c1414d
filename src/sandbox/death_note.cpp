// The death note and signal names (death_note.h).
#include "sandbox/death_note.h"

#include <signal.h>
#include <sys/mman.h>

#include <fmt/format.h>

namespace crucible {

namespace {

// Set only in worker processes and the candidate processes forked from them.
char* g_death_note = nullptr;
size_t g_note_size = 0;
void* g_page = nullptr;  // the page g_death_note lies in (the worker's, shared with the pool)
size_t g_page_size = 0;

}  // namespace

void install_worker_death_note(char* note, size_t size, void* page, size_t page_size) {
  g_death_note = note;
  g_note_size = size;
  g_page = page;
  g_page_size = page_size;
}

void set_worker_death_note(const char* text) {
  if (!g_death_note) return;
  size_t n = 0;
  while (text[n] != '\0' && n + 1 < g_note_size) ++n;
  for (size_t i = 0; i < n; ++i) g_death_note[i] = text[i];
  g_death_note[n] = '\0';
}

void adopt_worker_death_note_page(char* page, size_t size) {
  // The worker's page (its note and the job it runs) is the worker pool's: gone from here.
  if (g_page) munmap(g_page, g_page_size);
  g_page = nullptr;
  g_death_note = size > 0 ? page : nullptr;
  g_note_size = size;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return fmt::format("signal {}", sig);
  }
}

}  // namespace crucible
