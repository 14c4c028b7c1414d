// Private declarations of the attention family (attention.cpp, attention_samples.cpp): the
// shapes of a scaled-dot-product attention call and the sample generators. Internal to
// libcrucible.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible::attention {

// The sizes of a call: query [B, Hq, L, E], key [B, Hk, S, E], value [B, Hk, S, Ev]; Hq is a
// multiple of Hk (grouped-query attention: query head h reads key/value head h / (Hq / Hk)).
struct Dims {
  int64_t b = 0, hq = 0, hk = 0, l = 0, s = 0, e = 0, ev = 0;
};

// The strides of a fresh [B, H, L, E] tensor laid out as [B, L, H, E] (what the CPU flash
// kernel and the CUDA kernels allocate: heads interleaved within a sequence position).
Shape blhe_strides(const Shape& bhle);

// The strides of a fresh tensor of `shape` whose dims are ordered in memory as `like`'s are
// (cuDNN's alloc_with_matching_layout: dims sorted by `like`'s strides, ties by position).
Shape matching_strides(const Tensor& like, const Shape& shape);

// The samples of each op (attention_samples.cpp).
std::vector<Sample> flash_cpu_samples(const SampleContext& ctx);
std::vector<Sample> flash_cpu_backward_samples(const SampleContext& ctx);
std::vector<Sample> cudnn_samples(const SampleContext& ctx);
std::vector<Sample> cudnn_backward_samples(const SampleContext& ctx);

}  // namespace crucible::attention
