// Judging and cost of the convolutions: tolerances that grow with the length of each output's
// dot product, and FLOPs (2 per multiply-add) and bytes for GFLOP/s and GB/s.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crucible/compare/compare.h"
#include "ops/convolution_internal.h"

namespace crucible::conv {

namespace {

int64_t kernel_volume(const Tensor& w) {
  int64_t v = 1;
  for (int64_t d = 2; d < w.dim(); ++d) v *= w.size(d);
  return v;
}

}  // namespace

// Each output of a convolution is a dot product over C_in / groups * kernel volume terms (for a
// transposed one, weight.size(0) / groups * kernel volume at most): sqrt of that length widens
// the per-dtype tolerance (see matmul.cpp for the rationale).
// Inherently positional: a comparison policy sees the plain values (input, weight, bias, stride,
// padding, dilation, transposed, output_padding, groups).
double conv_tol_scale(const Values& a) {
  if (a.size() < 9 || !a[1].is_tensor()) return 1.0;
  const Tensor& w = a[1].tensor();
  if (w.dim() < 3) return 1.0;
  const bool transposed = a[6].to_bool();
  const int64_t groups = std::max<int64_t>(a[8].to_int(), 1);
  const int64_t cin = transposed ? w.size(0) / groups : w.size(1);
  return std::sqrt(static_cast<double>(std::max<int64_t>(cin * kernel_volume(w), 1)));
}

// The backward's three outputs reduce over different lengths: grad_input over C_Y / groups *
// kernel volume, grad_weight over N * (small-side spatial size), grad_bias over N * output
// spatial size. Each output is compared with the sqrt of its own length.
std::vector<TensorCheck> conv_backward_judge(const Values& in, const Values& ref,
                                             const Values& cand) {
  std::vector<TensorCheck> checks;
  // Inherently positional: a judge sees the plain values (convolution_backward's schema order).
  const Tensor& go = in.at(0).tensor();
  const Tensor& x = in.at(1).tensor();
  const Tensor& w = in.at(2).tensor();
  const bool transposed = in.at(7).to_bool();
  const int64_t groups = std::max<int64_t>(in.at(9).to_int(), 1);
  const Tensor& small = transposed ? x : go;
  // N * spatial positions of a tensor [N, C, ...].
  auto positions = [](const Tensor& t) {
    return t.dim() >= 2 && t.size(1) > 0 ? t.numel() / t.size(1) : int64_t{0};
  };
  // grad_input of a convolution sums over the out channels of its group (weight.size(0) /
  // groups); that of a transposed one over weight.size(1) channels; both times the kernel.
  const int64_t channels = w.dim() < 3 ? 1 : transposed ? w.size(1) : w.size(0) / groups;
  const double lengths[3] = {static_cast<double>(channels * kernel_volume(w)),
                             static_cast<double>(positions(small)),
                             static_cast<double>(positions(go))};
  const char* names[3] = {"grad_input", "grad_weight", "grad_bias"};
  for (size_t k = 0; k < 3 && k < ref.size(); ++k) {
    const std::string what = "output " + std::to_string(k) + " (" + names[k] + ")";
    const bool want = ref[k].is_tensor();
    const bool got = k < cand.size() && cand[k].is_tensor() && cand[k].tensor().defined();
    // An output that output_mask leaves out is not judged: the reference returns None, but
    // ATen's mkldnn path computes grad_weight together with grad_bias and returns both.
    if (!want) continue;
    if (!got) {
      TensorCheck c;
      c.what = what;
      c.passed = false;
      c.reason = what + ": output_mask asks for it, but the candidate returned None";
      checks.push_back(c);
      continue;
    }
    checks.push_back(compare_tensors(ref[k].tensor(), cand[k].tensor(),
                                     std::sqrt(std::max(lengths[k], 1.0)), what));
  }
  return checks;
}

namespace {

double bytes_of(const Value& v) {
  if (!v.is_tensor()) return 0;
  return static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
}

// 2 FLOPs per multiply-add: N * C_Y * (C_X / groups) * kernel volume * (small-side positions),
// once per computed product (the forward, or each of grad_input and grad_weight).
double conv_macs(const Tensor& input, const Tensor& weight, const Tensor& output, bool transposed) {
  const Tensor& small = transposed ? input : output;
  if (weight.dim() < 3 || small.dim() < 3) return 0;
  // small.numel() = N * C_Y * positions; each position meets (C_X / g) * kvol weights.
  return static_cast<double>(small.numel()) * static_cast<double>(weight.size(1)) *
         static_cast<double>(kernel_volume(weight));
}

}  // namespace

Cost conv_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  const Tensor& x = a.tensor("input");
  const Tensor& w = a.tensor("weight");
  const bool transposed = a.flag("transposed");
  // Non-transposed: weight.size(1) = C_in / g; transposed: weight.size(1) = C_out / g, and the
  // small side is the input with C_in channels: N * C_in * pos * (C_out / g) * kvol.
  c.flops = 2.0 * conv_macs(x, w, out[0].tensor(), transposed);
  for (const Value& v : a.values()) c.bytes += bytes_of(v);
  c.bytes += bytes_of(out[0]);
  return c;
}

Cost conv_backward_cost(const Args& a, const Values& out) {
  Cost c;
  const Tensor& go = a.tensor("grad_output");
  const Tensor& x = a.tensor("input");
  const Tensor& w = a.tensor("weight");
  const bool transposed = a.flag("transposed");
  const double macs = conv_macs(x, w, go, transposed);
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  for (size_t k = 0; k < 2 && k < mask.size(); ++k)
    if (mask[k]) c.flops += 2.0 * macs;
  if (mask.size() > 2 && mask[2]) c.flops += static_cast<double>(go.numel());
  for (const Value& v : a.values()) c.bytes += bytes_of(v);
  for (const Value& v : out) c.bytes += bytes_of(v);
  return c;
}

}  // namespace crucible::conv
