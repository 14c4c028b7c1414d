// A backend runs catalog op calls on a device. It says precisely which ops (and dtypes) it
// supports and never falls back silently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"

namespace crucible {

// Measures elapsed time of work submitted to a device. CPU backends use a steady clock; a GPU
// backend records device events.
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_seconds() = 0;  // waits for the stop mark when needed
};

// How a backend whose kernels come from outside (plugin:, dir:) isolates them: each op's kernels
// run in a candidate process of their own, forked from the trusted worker, which never loads
// them. The run sets these in every worker (see src/eval/run.cpp); without them, candidate
// processes run unsandboxed and leave no notes.
struct CandidateIsolation {
  // In the candidate process, before any kernel code is loaded: "" or why it failed.
  // The argument runs between Landlock's rules and the seccomp filter (sandbox.h); may be empty.
  std::function<std::string(const std::function<std::string()>& between)> enter_sandbox;
  // In the candidate process, before each kernel call (re-arms per-call limits).
  std::function<void()> call_started;
  // In the candidate process: the page its death note goes to (shared with the trusted worker).
  std::function<void(char* page, size_t size)> adopt_note_page;
  // In the trusted worker, when it dies with its candidate process: the note for the run.
  std::function<void(const std::string& note)> set_note;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  virtual std::string version() const;
  virtual Device device() const { return Device::cpu(); }
  // Whether its kernels are untrusted code from outside crucible (plugin:, dir:): they then run
  // in sandboxed workers (src/sandbox/sandbox.h) unless `crucible run --no-sandbox`.
  virtual bool untrusted() const { return false; }
  // For untrusted backends: how their candidate processes are isolated. Default: ignored.
  virtual void isolate_candidates(const CandidateIsolation& isolation) { (void)isolation; }

  // Whether the backend implements the op at all (for coverage listings).
  virtual bool has_op(const OpDef& op) const = 0;
  // Whether it implements this call (dtypes, layouts, argument values). When not, `why` says
  // what is missing. Default: has_op.
  virtual bool supports(const OpDef& op, const Values& args, std::string* why) const;
  // The dtypes it supports for `op` (for `crucible ops --backend`). Default: op.dtypes when
  // has_op, else none.
  virtual std::vector<DType> supported_dtypes(const OpDef& op) const;

  // Runs the op on bound arguments (schema order, defaults filled, tensors on device()).
  // Returns the op's outputs in schema order; an op that mutates an argument returns it as
  // ATen does. An argument error is reported as an op error (ErrorKind::OpError).
  virtual Values run(const OpDef& op, const Values& args) = 0;

  // Seeds the backend's random generator (random ops: rand, randn, dropout, ...). The same seed
  // must give the same values on the same backend.
  virtual void manual_seed(uint64_t seed) { seed_ = seed; }
  uint64_t seed() const { return seed_; }

  // The number of threads one call may use (`crucible run --threads`; correctness workers run
  // with 1 so that parallel workers do not oversubscribe the cores). Default: ignored.
  virtual void set_num_threads(int n) { (void)n; }

  // Device memory and transfers. CPU backends keep the defaults (host memory, plain copies).
  virtual Tensor allocate(const Shape& shape, const Shape& strides, DType dtype);
  virtual Tensor to_device(const Tensor& host);  // same shape and strides
  virtual Tensor to_host(const Tensor& t);
  virtual void synchronize() {}
  virtual std::unique_ptr<DeviceTimer> make_timer();

 protected:
  uint64_t seed_ = 0;
};

// Creates backends by name: "ref", "faulty", later "cpu", "aten", "plugin:<lib>", "dir:<path>".
class BackendRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Backend>(const std::string& spec)>;
  struct Entry {
    std::string name;  // "ref", or a prefix ending in ':' ("plugin:")
    std::string description;
    bool listed = true;  // test-only backends are not listed to users
    Factory factory;
    // Optional: what a process does before it forks the workers that create this backend, so
    // that they inherit it instead of each doing it again (the aten backend loads libtorch).
    std::function<void()> prepare;
  };

  static BackendRegistry& instance();
  void add(Entry e);
  // Creates the backend for `spec`; an unknown name is a Usage error listing the known ones.
  std::unique_ptr<Backend> create(const std::string& spec) const;
  // Runs the `prepare` step of the backend of each of `specs` (unknown names are left to
  // create()). Called by a process before it forks workers that create these backends.
  void prepare(const std::vector<std::string>& specs) const;
  std::vector<const Entry*> entries() const;
  // The default backend of this build: the fastest built-in CPU backend.
  std::string default_backend() const;

 private:
  std::vector<Entry> entries_;
};

// Backends built into this binary register themselves here (called once by instance()).
void register_builtin_backends(BackendRegistry& r);

}  // namespace crucible
