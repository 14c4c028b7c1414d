// One call of a C ABI kernel: the arguments as crucible_values, the outputs laid out by the
// output plan (guarded and poisoned, or plain), the callbacks, and the checks after the call.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/plugin/abi_values.h"
#include "backends/plugin/guards.h"
#include "backends/plugin/kernel_library.h"
#include "backends/plugin/output_plan.h"
#include "crucible/ops/op.h"

namespace crucible {

// Thrown for a kernel that broke the ABI's rules (wrote outside its output, replaced an output
// pointer, ...): the evaluator records it as a failed case with this message as the detail.
[[noreturn]] void kernel_fault(const std::string& message);

class KernelCall {
 public:
  // `guarded`: outputs get guard zones and are filled with `poison`.
  KernelCall(const OpDef& op, const OutputPlan& plan, const Values& args, bool guarded,
             uint8_t poison, uint64_t seed, int num_threads);
  KernelCall(const KernelCall&) = delete;
  KernelCall& operator=(const KernelCall&) = delete;

  // Calls the kernel; returns its status. message() holds what it wrote to call->error. Mutated
  // tensor arguments are passed as guarded copies and copied back after the call.
  int32_t invoke(crucible_kernel_fn fn);
  std::string message() const;
  // Turns a status other than CRUCIBLE_OK into crucible's error (op error, unsupported, fault).
  void raise_for_status(int32_t status) const;

  // After a successful call: checks the output DLTensors are as crucible left them (or as the
  // callbacks set them), data-dependent outputs were allocated and, when guarded, the guard zones
  // are intact; kernel_fault() with the cause otherwise. `when` is appended to the cause.
  void check(const std::string& when) const;
  // The outputs as crucible values, in schema order.
  Values outputs() const;

  // Guarded outputs with elements still entirely `poison`: (what, tensor) pairs.
  struct Written {
    std::string what;
    Tensor tensor;
  };
  std::vector<Written> fresh_outputs() const;

  // The supports hook's view: the arguments only.
  static int32_t ask_supports(crucible_supports_fn fn, const OpDef& op, const Values& args,
                              std::string* why);

 private:
  struct Out {
    size_t k = 0;   // return index
    int item = -1;  // list item, or -1
    OutputSlot::Kind kind = OutputSlot::Kind::Fresh;
    Tensor tensor;  // what the output is now
    bool guarded = false;
    GuardedOutput g;
    bool viewed = false;  // made a view by make_view
    DLTensor expected{};  // the DLTensor as crucible left it
  };
  static int32_t alloc_output_cb(crucible_call* c, DLTensor* out, int32_t ndim,
                                 const int64_t* shape, DLDataType dtype);
  static int32_t make_view_cb(crucible_call* c, DLTensor* out, const DLTensor* base, int32_t ndim,
                              const int64_t* shape, const int64_t* strides, int64_t offset);
  int32_t callback_error(const std::string& msg);
  std::string describe(const Out& o) const;
  std::string pointer_cause(const Out& o, const DLTensor& now) const;
  Tensor new_output(const TensorSpec& spec, Out& o);

  const OpDef& op_;
  const OutputPlan& plan_;
  const Values& args_;
  Values call_args_;  // args_, with mutated tensors replaced by their guarded copies
  struct GuardedArg {
    size_t arg = 0;
    Tensor original;
    GuardedOutput g;
    int64_t lo = 0, hi = 0;  // the storage elements the original can touch
  };
  std::vector<GuardedArg> guarded_args_;
  void copy_back();
  bool guarded_;
  uint8_t poison_;
  AbiValues abi_;
  std::vector<crucible_value> cargs_, couts_;
  std::vector<std::vector<DLTensor*>> out_lists_;
  std::map<const DLTensor*, Out> outs_;
  std::vector<char> error_;
  crucible_call call_{};
};

}  // namespace crucible
