// The cpu backend's shape kernel families, each in its own file; register_shape_kernels
// (shape.cpp) calls them all. Their data movement is in shape_copy.h.
#pragma once

#include "backends/cpu/kernel_table.h"

namespace crucible::cpu {

void register_view_kernels(KernelTable& t);           // view_ops.cpp: views, splits, *_copy
void register_view_backward_kernels(KernelTable& t);  // view_backward.cpp: *_backward, *_scatter
void register_cat_kernels(KernelTable& t);            // join_cat.cpp: cat, stack
void register_tile_kernels(KernelTable& t);           // join_tile.cpp: repeat, tril, triu, ...
void register_pad_kernels(KernelTable& t);            // pad_constant.cpp: constant_pad_nd
void register_pad_mirror_kernels(KernelTable& t);     // pad_mirror.cpp: reflection/replication
void register_creation_kernels(KernelTable& t);       // creation_new.cpp: new_*, zeros, full, ...
void register_creation_fill_kernels(KernelTable& t);  // creation_fill.cpp: fill, copy, arange
void register_shape_meta_kernels(KernelTable& t);     // shape_meta.cpp: sym_size, sym_stride, ...

// Whether every tensor argument (lists included) has a dtype the shape kernels move: the real
// dtypes of the catalog (no complex, no fp8). Sets `why` when not.
bool shape_dtypes_supported(const Values& args, std::string* why);
// Those dtypes: bool, the integers, f16, bf16, f32, f64.
std::vector<DType> shape_dtypes();
// A SupportsFn that checks shape_dtypes_supported.
bool shape_supports(const OpDef& op, const Values& args, std::string* why);
// shape_supports, and a dtype argument (of a factory) must be one of shape_dtypes too.
bool shape_factory_supports(const OpDef& op, const Values& args, std::string* why);

}  // namespace crucible::cpu
