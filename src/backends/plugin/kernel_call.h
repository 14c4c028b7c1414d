// One call of a C ABI kernel, as the trusted worker makes it: the arguments' whole storages
// copied into a fresh (or reused) shared arena, each output laid out between guard pages and
// guard bytes and filled with a poison drawn for this call, the request sent to the candidate
// process, and its reply checked: guard bytes, what became of every output (left as laid out,
// made a view through make_view, allocated through alloc_output), the process state the kernel
// left. The arguments' storages are copied back after the call (so the evaluator sees every
// write into an input, gaps of strided views included), and fresh outputs are copied out of the
// arena at once, then looked at again after a short wait (a late writer is caught).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin/candidate_process.h"
#include "backends/plugin/candidate_protocol.h"
#include "backends/plugin/output_plan.h"
#include "backends/plugin/shared_arena.h"
#include "crucible/kernel.h"
#include "crucible/ops/op.h"

namespace crucible {

// Thrown for a kernel that broke the ABI's rules (wrote outside its output, replaced an output
// pointer, ...): the evaluator records it as a failed case with this message as the detail.
[[noreturn]] void kernel_fault(const std::string& message);

// How a call's outputs are filled before the kernel runs.
enum class PoisonKind : uint8_t {
  NaN,     // every byte 0xFF (NaN in every floating type, -1 in integers)
  Huge,    // every byte 0x7F (near the largest finite value)
  Zero,    // zeros
  Random,  // random bytes, element by element
};

struct CallLayout {
  bool guarded = true;  // guard pages, guard bytes and poison
  uint64_t seed = 0;    // layout offsets and guard bytes
  PoisonKind poison = PoisonKind::NaN;
  uint64_t poison_seed = 0;            // PoisonKind::Random's bytes
  std::shared_ptr<SharedArena> arena;  // reuse this arena (the same seed gives the same places)
  // The timing loop's call: its out= arguments are poisoned when the arena is filled (they are
  // written, never read), so that not even its first timed call finds the judged result there.
  bool timed = false;
};

// Whether argument `arg` of `schema` is an out= argument: keyword-only and written through.
bool is_out_argument(const Schema& schema, size_t arg);

// A fresh output as copied out of the arena, with the poison it was filled with.
struct WrittenOutput {
  std::string what;  // "output 0", "output 1[2]"
  Tensor tensor;
  Tensor poison;
  size_t output = 0;  // its index among the op's returns
};

class KernelCall {
 public:
  KernelCall(const OpDef& op, const OutputPlan& plan, const Values& args, CallLayout layout,
             uint64_t seed, int num_threads);
  KernelCall(const KernelCall&) = delete;
  KernelCall& operator=(const KernelCall&) = delete;

  // Sends the call; returns the kernel's status. `refill`: copy the inputs and poison again
  // (false only when repeating the same call on unchanged arguments, as timing does).
  int32_t invoke(CandidateProcess& host, bool refill = true);
  // Turns a status other than CRUCIBLE_OK (or a process-state change) into crucible's error.
  void raise_for_status(int32_t status) const;
  // After a successful call: guard bytes, output pointers, allocations, late writes; kernel_fault
  // with the cause and `when` appended otherwise.
  void check(const std::string& when) const;
  // The outputs in schema order (fresh ones copied out of the arena; `in_arena`: left in the
  // arena, for timing).
  Values outputs(bool in_arena = false) const;
  std::vector<WrittenOutput> written() const;
  const std::shared_ptr<SharedArena>& arena() const { return arena_; }
  // Timing, on the CPU: fills every fresh output in the arena with `byte` and evicts it from the
  // caches, between two timed calls (outside the timed region), so that a timed call that
  // skips its work leaves the poison where its result should be.
  void poison_arena_outputs(unsigned char byte);
  // Timing, on CUDA (where a timed call's outputs stay on the device): after a timed call, its
  // fresh outputs are copied from the device into the arena (where outputs(true) reads them),
  // then filled with `byte` on the device before the next one.
  void take_device_outputs(CandidateProcess& host, unsigned char byte);
  // Timing: the out= arguments a timed call writes, as views into the arena, by output slot.
  // Only those on a storage no other argument uses (a written-into input is read too, and its
  // repeated calls legitimately compound); their whole storage regions are poisoned and copied
  // back with the fresh outputs between timed calls.
  std::vector<std::pair<size_t, Tensor>> timed_out_arguments() const;
  // Seconds the candidate process said the kernel took (not trusted: on the CPU for
  // information; on CUDA the event time, checked against the trusted wall time before use).
  double reported_seconds() const { return static_cast<double>(kernel_ns_) * 1e-9; }

  // The supports hook, asked in the candidate process with the arguments (tensors without data).
  static int32_t ask_supports(CandidateProcess& host, const OpDef& op, const Values& args,
                              std::string* why);

 private:
  struct Out {
    size_t slot = 0;
    int item = -1;
    size_t region = 0;
    TensorSpec spec;
    OutHow how = OutHow::AsGiven;
    std::string cause;
    Tensor copied;  // fresh: the body copied out; made view / allocated: the result
    Tensor poison;
  };
  // The arena ranges (offset, bytes) a timed call writes: the fresh outputs and the judged out=
  // arguments (out_args_), empty ones left out.
  std::vector<std::pair<uint64_t, uint64_t>> timed_ranges() const;
  std::string describe(const Out& o) const;
  std::string changed_cause(const Out& o, bool moved, int64_t at) const;
  std::string device_guard_cause() const;
  void lay_out();
  void fill();
  void parse_reply(const std::string& reply);
  void copy_back();

  const OpDef& op_;
  const OutputPlan& plan_;
  const Values& args_;
  CallLayout layout_opts_;
  ArenaLayout layout_;
  std::shared_ptr<SharedArena> arena_;
  uint64_t seed_;
  int threads_;
  std::vector<const Storage*> storages_;  // distinct argument storages, region i
  std::vector<std::shared_ptr<Storage>> storage_refs_;
  std::vector<std::string> region_names_;
  std::vector<Out> outs_;
  std::vector<std::pair<size_t, size_t>> out_args_;  // (output slot, region): timed_out_arguments
  std::string request_;
  // The reply.
  int32_t status_ = 0;
  std::string message_, changes_, output_text_;
  uint64_t kernel_ns_ = 0;
  std::vector<Value> numbers_;  // per slot (Number slots)
  std::string late_write_;
};

}  // namespace crucible
