// A worker's CandidateIsolation.
#include "eval/candidate_isolation.h"

#include "sandbox/death_note.h"

namespace crucible {

CandidateIsolation worker_candidate_isolation(const SandboxOptions* sandbox) {
  CandidateIsolation iso;
  if (sandbox)
    iso.enter_sandbox = [sandbox](const std::function<std::string()>& between) {
      return enter_sandbox(*sandbox, between);
    };
  iso.call_started = sandbox_job_started;
  iso.adopt_note_page = adopt_worker_death_note_page;
  iso.set_note = [](const std::string& note) { set_worker_death_note(note.c_str()); };
  return iso;
}

}  // namespace crucible
