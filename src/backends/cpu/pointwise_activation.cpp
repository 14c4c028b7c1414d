// The cpu backend's activations and their backward ops, through the elementwise engine.
#include <string>

#include "backends/cpu/pointwise_ops.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/arithmetic.h"

namespace crucible::cpu {

namespace {

double num(const Args& a, const char* name, double dflt) {
  return a.given(name) ? a.real(name) : dflt;
}

// A Scalar parameter for an integral result: truncated toward zero, wrapped to its dtype.
int64_t int_param(const Args& a, const char* name, int64_t dflt, DType rt) {
  if (is_floating(rt)) return 0;
  return arith::wrap_to(a.given(name) ? a.scalar(name).to_int() : dflt, rt);
}

// "none" or "tanh": the meta function refused any other.
void gelu_mode(const Args& a, PwOp& op, PwOp tanh_op) {
  if (a.given("approximate") && a.str("approximate") == "tanh") op = tanh_op;
}

}  // namespace

void register_pointwise_activation_kernels(KernelTable& t) {
  const auto F = pw_float_dtypes();
  auto add = [&](const std::string& name, PwOp op, std::vector<int> operands, PwMode mode,
                 PwParamFn fn) {
    PwSpec s;
    s.op = op;
    s.result = operands.size() > 1 ? PwResult::Promote : PwResult::Self;
    s.operands = std::move(operands);
    s.mode = mode;
    s.params = fn;
    // The clamping activations also take integral tensors (bool raises in the meta function).
    const bool any_dtype = name.starts_with("aten.relu") || name.starts_with("aten.hardtanh") ||
                           name.starts_with("aten.threshold");
    // The backward ops take any grad dtype promoting with self's to a floating one (the meta
    // function raises for the others).
    const bool backward = name.ends_with("_backward.default");
    s.dtypes = any_dtype || backward ? pw_all_dtypes() : F;
    add_pointwise(t, name, std::move(s));
  };
  // Forward: the op and its in-place form on self.
  auto fwd = [&](const char* base, PwOp op, PwParamFn fn) {
    add(std::string("aten.") + base + ".default", op, {0}, PwMode::Functional, fn);
    add(std::string("aten.") + base + "_.default", op, {0}, PwMode::Inplace, fn);
  };
  fwd("relu", PwOp::Relu, nullptr);
  fwd("silu", PwOp::Silu, nullptr);
  fwd("mish", PwOp::Mish, nullptr);
  fwd("hardsigmoid", PwOp::Hardsigmoid, nullptr);
  fwd("hardswish", PwOp::Hardswish, nullptr);
  fwd("gelu", PwOp::Gelu,
      [](const Args& a, DType, PwParams&, PwOp& op) { gelu_mode(a, op, PwOp::GeluTanh); });
  fwd("hardtanh", PwOp::Hardtanh, [](const Args& a, DType rt, PwParams& p, PwOp&) {
    p.s[0] = num(a, "min_val", -1.0);
    p.s[1] = num(a, "max_val", 1.0);
    p.i[0] = int_param(a, "min_val", -1, rt);
    p.i[1] = int_param(a, "max_val", 1, rt);
  });
  add("aten.relu6.default", PwOp::Hardtanh, {0}, PwMode::Functional,
      [](const Args&, DType, PwParams& p, PwOp&) {
        p.s[0] = 0;
        p.s[1] = 6;
        p.i[0] = 0;
        p.i[1] = 6;
      });
  fwd("leaky_relu", PwOp::LeakyRelu,
      [](const Args& a, DType, PwParams& p, PwOp&) { p.s[0] = num(a, "negative_slope", 0.01); });
  fwd("elu", PwOp::Elu, [](const Args& a, DType, PwParams& p, PwOp&) {
    p.s[0] = num(a, "alpha", 1.0);
    p.s[1] = num(a, "scale", 1.0);
    p.s[2] = num(a, "input_scale", 1.0);
  });
  add("aten.softplus.default", PwOp::Softplus, {0}, PwMode::Functional,
      [](const Args& a, DType, PwParams& p, PwOp&) {
        p.s[0] = num(a, "beta", 1.0);
        p.s[1] = num(a, "threshold", 20.0);
      });
  fwd("threshold", PwOp::Threshold, [](const Args& a, DType rt, PwParams& p, PwOp&) {
    p.s[0] = a.real("threshold");
    p.s[1] = a.real("value");
    p.i[0] = int_param(a, "threshold", 0, rt);
    p.i[1] = int_param(a, "value", 0, rt);
  });

  // Backward: (grad_output, self or result, ...).
  auto bwd = [&](const char* base, PwOp op, PwParamFn fn) {
    add(std::string("aten.") + base + ".default", op, {0, 1}, PwMode::Functional, fn);
  };
  bwd("threshold_backward", PwOp::ThresholdBackward,
      [](const Args& a, DType rt, PwParams& p, PwOp&) {
        p.s[0] = a.real("threshold");
        p.i[0] = int_param(a, "threshold", 0, rt);
      });
  bwd("sigmoid_backward", PwOp::SigmoidBackward, nullptr);
  bwd("tanh_backward", PwOp::TanhBackward, nullptr);
  bwd("silu_backward", PwOp::SiluBackward, nullptr);
  bwd("mish_backward", PwOp::MishBackward, nullptr);
  bwd("hardsigmoid_backward", PwOp::HardsigmoidBackward, nullptr);
  bwd("hardswish_backward", PwOp::HardswishBackward, nullptr);
  bwd("gelu_backward", PwOp::GeluBackward,
      [](const Args& a, DType, PwParams&, PwOp& op) { gelu_mode(a, op, PwOp::GeluTanhBackward); });
  bwd("hardtanh_backward", PwOp::HardtanhBackward, [](const Args& a, DType, PwParams& p, PwOp&) {
    p.s[0] = a.real("min_val");
    p.s[1] = a.real("max_val");
  });
  bwd("leaky_relu_backward", PwOp::LeakyReluBackward, [](const Args& a, DType, PwParams& p, PwOp&) {
    // A negative slope with self_is_result was refused by the meta function.
    p.s[0] = a.real("negative_slope");
  });
  bwd("softplus_backward", PwOp::SoftplusBackward, [](const Args& a, DType, PwParams& p, PwOp&) {
    p.s[0] = a.real("beta");
    p.s[1] = a.real("threshold");
  });
  // elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result)
  add("aten.elu_backward.default", PwOp::EluBackward, {0, 5}, PwMode::Functional,
      [](const Args& a, DType, PwParams& p, PwOp&) {
        p.s[0] = a.real("alpha");
        p.s[1] = a.real("scale");
        p.s[2] = a.real("input_scale");
        p.s[3] = a.flag("is_result") ? 1.0 : 0.0;  // (a negative alpha then: refused by meta)
      });
}

}  // namespace crucible::cpu
