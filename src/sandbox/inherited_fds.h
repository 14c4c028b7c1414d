// The descriptors crucible's own child processes close, and the ones they keep.
//
// A worker, a candidate zygote and a candidate process each start by closing every descriptor
// they do not need (the results file, the run's lock, other workers' pipes), so that a kernel
// holds nothing of the run. A memory checker that follows a process tree (compute-sanitizer's
// `--target-processes all`) gives each process it follows descriptors of its own (its tree
// tracker's pipes and poll set); a process that closed them and then forks is stopped by the
// checker (exit status 255 inside fork()). When CRUCIBLE_KEEP_INHERITED_FDS is set (the
// `--sanitize memcheck` re-run under compute-sanitizer sets it), children keep every
// inheritable descriptor that is not a file or folder: crucible makes its own pipes, sockets
// and memory files close-on-exec, so what is kept is what whoever started crucible handed on.
#pragma once

#include <initializer_list>

namespace crucible {

// The name of the environment variable that asks for inherited descriptors to be kept.
inline constexpr const char* kKeepInheritedFdsEnv = "CRUCIBLE_KEEP_INHERITED_FDS";

// Reads CRUCIBLE_KEEP_INHERITED_FDS once (first thing in main): set and not "0", children keep
// inherited descriptors. Without this call they keep none.
void read_inherited_fds_choice();

// Whether children keep inherited descriptors (read_inherited_fds_choice).
bool keeping_inherited_fds();

// Closes every descriptor from `lo` up except those in `keep` and, when keeping them, the
// inherited ones (inheritable, neither a regular file nor a folder).
void close_fds_from(int lo, std::initializer_list<int> keep = {});

// The lowest descriptor number at or above `lo` that close_fds_from would not keep for itself:
// where a child puts its channel before closing the rest.
int first_unkept_fd(int lo);

}  // namespace crucible
