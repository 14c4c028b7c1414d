// The death note: a few words a process under test leaves in memory its parent can read, so a
// worker that dies says why ("sandbox: blocked socket()"), and signal names for the verdicts.
#pragma once

#include <cstddef>
#include <string>

namespace crucible {

// "SIGSEGV", "SIGABRT", ... for a signal number.
std::string signal_name(int sig);

// In a new worker: its note is `note` (`size` bytes) inside `page` (`page_size` bytes), a page
// shared with the worker pool.
void install_worker_death_note(char* note, size_t size, void* page, size_t page_size);

// In a worker process: leaves a short note (at most 255 bytes) that the parent adds to the
// failure's detail if the worker dies before reporting its job, e.g. "sandbox: blocked
// socket()". Async-signal-safe; a no-op outside a worker. An empty text clears the note.
void set_worker_death_note(const char* text);

// In a process forked from a worker to run candidate code: unmaps the worker's death-note page
// (shared with the worker pool) and writes this process's notes to `page` instead (shared with
// the worker only). A no-op for the page outside a worker.
void adopt_worker_death_note_page(char* page, size_t size);

}  // namespace crucible
