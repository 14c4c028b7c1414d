// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks and
// block geometry of im2col (unfold), col2im (fold) and im2col_backward (Im2Col.cpp, Col2Im.cpp,
// im2col_shape_check.h). Written once here; the catalog's meta functions and references and the
// cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::im2col {

struct Pair {
  int64_t h = 0, w = 0;
};

// A list argument of exactly 2 values ("It is expected kernel_size equals to 2, but got size 1").
Pair pair_arg(const Value& v, const char* name);

// "(h, w)", as ATen's messages print a pair.
std::string pair_str(Pair p);

struct Blocks {
  Pair kernel, dilation, padding, stride;
};

// The kernel_size / dilation / padding / stride arguments and their checks, shared by both
// directions: kernel, dilation and stride > 0, padding >= 0.
Blocks check_blocks(const Args& a);

// Blocks that fit a size-`n` dim, with C++'s truncating division as ATen computes it (may be
// <= 0 when the dilated kernel does not fit).
int64_t n_blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s);

// The checked geometry of an im2col call or of a fold (col2im, im2col_backward): n batch entries
// (1 unbatched) of c channels of an [h, w] image; [oh, ow] blocks.
struct Unfold {
  Blocks b;
  int64_t n = 1, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  Shape out_shape;
};

// im2col(self, kernel_size, dilation, padding, stride)'s checks and geometry: self [N, C, H, W]
// or [C, H, W] (N may be 0, C, H, W may not), at least one block per dim, a floating dtype.
Unfold im2col_plan(const Args& a);

// The checks and geometry of folding `input_name` (col2im's self, im2col_backward's
// grad_output: [N, C*kh*kw, L] or [C*kh*kw, L]) into the image size `size_name` (col2im's
// output_size, im2col_backward's input_size).
Unfold fold_plan(const Args& a, const char* input_name, const char* size_name);

}  // namespace crucible::im2col
