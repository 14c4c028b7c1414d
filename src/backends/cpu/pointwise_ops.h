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
using PwParamFn = void (*)(const Args& args, DType result, PwParams& p, PwOp& op);

struct PwSpec {
  PwOp op = PwOp::Identity;
  std::vector<int> operands;  // argument indices, in loop order (numbers become 0-d tensors)
  std::vector<int> promote;   // arguments taking part in the result type (empty: operands)
  PwResult result = PwResult::Promote;
  PwMode mode = PwMode::Functional;
  PwParamFn params = nullptr;
  std::vector<DType> dtypes;
  bool cast_scalars = false;  // 0-d operands are cast to the result dtype, floating ones too
  int divisor = -1;           // operand (loop order) that must hold no zero when integral
};

// clamp's Scalar bounds (`min` and `max`, either None) in the result dtype: the missing one is
// -inf/+inf, or the dtype's limit for integral results.
void clamp_bounds(const Args& args, DType result, PwParams& p, PwOp& op);
// The same from the two bounds as values (clamp_min, clamp_max: the other one None).
void clamp_bounds_of(const Value& lo, const Value& hi, DType result, PwParams& p);

// A functional op's fresh output laid out as ATen's TensorIterator lays it out (dense, in the
// memory order of its operands: pw_output_strides); the meta function gives shape and dtype.
void pw_layout(const Args& args, Values& specs, const PwSpec& spec);
// Runs a call of `op` through the elementwise engine as `spec` describes, into `outputs` as the
// op's meta function described them (a fresh tensor, self or the out= argument), after that
// function checked the call (destination-passing: the cpu table's run_into).
void pw_execute_into(const OpDef& op, const Args& args, const Values& outputs, const PwSpec& spec);

// Adds `name` to the table with the shared elementwise kernel.
void add_pointwise(KernelTable& t, const std::string& name, PwSpec spec);

// Dtype lists.
std::vector<DType> pw_float_dtypes();  // f16 bf16 f32 f64
std::vector<DType> pw_int_dtypes();    // u8 i8 i16 i32 i64
std::vector<DType> pw_all_dtypes();    // b8 + ints + floats

void register_pointwise_activation_kernels(KernelTable& t);  // pointwise_activation.cpp
void register_pointwise_math_kernels(KernelTable& t);        // pointwise_math.cpp
void register_copy_kernels(KernelTable& t);                  // copy.cpp

}  // namespace crucible::cpu
