// How catalog ops map onto the elementwise engine: which arguments are the operands, how the
// result dtype is found, which scalar parameters the loop takes, and whether the op writes a
// new tensor, self (in-place) or an out= argument. Shared by the pointwise registration files.
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/pointwise_kernels.h"

namespace crucible::cpu {

enum class PwResult : uint8_t {
  Promote,  // ATen's result_type over `promote`
  Float,    // result_type, integral -> f32 (true division, exp, ...)
  Bool,     // comparisons: computed in result_type, written as bool
  Self,     // the dtype of the first operand
};
enum class PwMode : uint8_t { Functional, Inplace, Out };

// Fills the loop's parameters (and may pick another loop, e.g. gelu's approximate="tanh").
using PwParamFn = void (*)(const Values& args, DType result, PwParams& p, PwOp& op);

struct PwSpec {
  PwOp op = PwOp::Identity;
  std::vector<int> operands;  // argument indices, in loop order (numbers become 0-d tensors)
  std::vector<int> promote;   // arguments taking part in the result type (empty: operands)
  PwResult result = PwResult::Promote;
  PwMode mode = PwMode::Functional;
  int out_arg = -1;  // PwMode::Out
  PwParamFn params = nullptr;
  std::vector<DType> dtypes;
  // ATen's argument checks beyond promotion (boolean masks, ...); raise op_error.
  void (*check)(const Values& args) = nullptr;
  bool overlap_check = true;  // in-place: self must not have overlapping elements
};

// Adds `name` to the table with the shared elementwise kernel.
void add_pointwise(KernelTable& t, const std::string& name, PwSpec spec);

// Dtype lists.
std::vector<DType> pw_float_dtypes();  // f16 bf16 f32 f64
std::vector<DType> pw_int_dtypes();    // u8 i8 i16 i32 i64
std::vector<DType> pw_all_dtypes();    // b8 + ints + floats

void register_pointwise_activation_kernels(KernelTable& t);  // pointwise_activation.cpp
void register_copy_kernels(KernelTable& t);                  // copy.cpp

}  // namespace crucible::cpu
