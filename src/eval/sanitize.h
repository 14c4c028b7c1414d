// `--sanitize memcheck`: after the correctness phase, every case that failed, crashed or timed out
// is run again alone, through `crucible run --op ... --case ...` under a memory checker, and the
// checker's report, trimmed to its errors, is added to the case's detail (results.jsonl and every
// report). The checker is compute-sanitizer's memcheck for CUDA candidates (aten:cuda, .cu
// kernels, CUDA plugins, FlagGems) and valgrind's memcheck for the others.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crucible/eval/run.h"

namespace crucible {

struct RunPlan;
struct RunRecords;

// The values --sanitize takes.
inline constexpr const char* kSanitizeValues = "memcheck";

// Refuses (a Usage error naming --sanitize and the valid values) anything but "memcheck".
void check_sanitize_value(const std::string& value);

enum class Checker { Valgrind, ComputeSanitizer };

// The checker that judges op `op`'s cases on candidate backend `backend` (a backend spec).
Checker checker_for(const std::string& backend, const std::string& op);

// With --sanitize: every checker the run's candidate may need (per op of a kernel folder) is
// installed; a Usage error naming the missing program and its package otherwise.
void require_checkers(const RunOptions& o);

// With --sanitize: re-runs the failed, crashed and timed-out cases of `records` that carry no
// checker's report yet (a resumed run does the rest), each alone under its checker, adds the
// trimmed report to its detail and rewrites results.jsonl. The checkers' whole output stays in
// <run folder>/sanitize/<case id>/. Without --sanitize, does nothing.
void run_sanitize(RunPlan& plan, RunRecords& records);

// The error reports of valgrind's log (one file per process), trimmed: each error's kind, its
// frames and the address's description, repeats (the same error in another process) once; at
// most `max_errors` errors and about `max_chars` characters.
std::string valgrind_errors(const std::vector<std::string>& logs, size_t max_errors = 6,
                            size_t max_chars = 4000);

// The same for compute-sanitizer's output ("========= Invalid __global__ write ...").
std::string sanitizer_errors(const std::string& output, size_t max_errors = 6,
                             size_t max_chars = 4000);

}  // namespace crucible
