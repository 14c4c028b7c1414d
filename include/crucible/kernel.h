/* crucible's kernel ABI: how kernels and backends from outside plug into crucible.
 *
 * Plain C99; a kernel library needs only this header and DLPack's <dlpack/dlpack.h> (Debian:
 * libdlpack-dev). docs/kernel-abi.md is the guide; <crucible/kernel.hpp> makes kernels short in
 * C++.
 *
 * The shape of it:
 *  - A kernel is `int32_t kernel(crucible_call* call)`. The call holds the op's arguments in
 *    schema order (call->args), its outputs (call->outputs), a stream, a seed, the number of
 *    threads it may use, callbacks, and a buffer for an error message. It returns a status.
 *  - Tensors are DLPack DLTensors (strides in elements, never NULL; byte_offset honoured).
 *    Every other argument kind is a tagged crucible_value.
 *  - Outputs are destination-passing: crucible allocates every output whose shape it knows and
 *    the kernel writes into it (crucible surrounds each with guard zones and fills it with a
 *    poison pattern first). An op whose output shape depends on the data (nonzero) gets an
 *    output with data == NULL and allocates it with call->alloc_output. An output that the
 *    schema marks as a view of an input (`Tensor(a)`) may be made one with call->make_view;
 *    an output the schema marks as a mutated argument (`Tensor(a!)`) is that argument's
 *    DLTensor itself: write in place.
 *  - A library exports one entry point, crucible_plugin_v1(), returning its name, the ABI
 *    version it was built with, its device and its kernels (op name -> function, with an
 *    optional per-call `supports` hook). crucible refuses a library built for another version.
 */
#ifndef CRUCIBLE_KERNEL_H_
#define CRUCIBLE_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI. A library records the version it was built with in
 * crucible_plugin.abi_version; crucible loads only libraries of its own version. */
#define CRUCIBLE_KERNEL_ABI_VERSION 1

/* The entry point every plugin library exports (see crucible_plugin below). */
#define CRUCIBLE_PLUGIN_ENTRY_SYMBOL "crucible_plugin_v1"

/* DLPack 0.6 has no code for bool and the float8 types; crucible uses the codes later DLPack
 * versions gave them (kDLBool = 6, kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12), 8 bits, 1 lane.
 * Complex types are kDLComplex with the bits of both parts (c32 = 32, c64 = 64, c128 = 128). */
#define CRUCIBLE_DL_BOOL 6
#define CRUCIBLE_DL_FLOAT8_E4M3FN 10
#define CRUCIBLE_DL_FLOAT8_E5M2 12

/* The largest number of dimensions crucible passes or accepts. */
#define CRUCIBLE_MAX_NDIM 16

/* What a kernel (or a supports hook) returns. */
typedef enum crucible_status {
  CRUCIBLE_OK = 0,
  /* The arguments are invalid for the op: ATen would raise (write why to call->error). crucible
   * judges this against the reference: both must raise. */
  CRUCIBLE_ERROR = 1,
  /* The kernel does not handle this call (a dtype, layout or argument value it lacks). Counted
   * as unsupported, never as a failure or a pass. Prefer the supports hook for this. */
  CRUCIBLE_UNSUPPORTED = 2,
  /* Something went wrong inside the kernel (out of memory, a device error). Counted as failed. */
  CRUCIBLE_INTERNAL = 3
} crucible_status;

/* The kind of a crucible_value: one per argument kind of an ATen schema. */
typedef enum crucible_value_kind {
  CRUCIBLE_NONE = 0,            /* None, an absent optional (Tensor?, int?, ...) */
  CRUCIBLE_TENSOR = 1,          /* Tensor, Tensor? when present: v.tensor */
  CRUCIBLE_TENSOR_LIST = 2,     /* Tensor[]: v.tensors, every item non-NULL */
  CRUCIBLE_OPT_TENSOR_LIST = 3, /* Tensor?[]: v.tensors, NULL items are None */
  CRUCIBLE_INT = 4,             /* int, SymInt, and a Scalar holding an integer: v.i */
  CRUCIBLE_FLOAT = 5,           /* float, and a Scalar holding a float: v.f */
  CRUCIBLE_BOOL = 6,            /* bool, and a Scalar holding a bool: v.b (0 or 1) */
  CRUCIBLE_STRING = 7,          /* str: v.s (NUL-terminated UTF-8) */
  CRUCIBLE_INT_LIST = 8,        /* int[], SymInt[]: v.ints */
  CRUCIBLE_FLOAT_LIST = 9,      /* float[]: v.floats */
  CRUCIBLE_BOOL_LIST = 10,      /* bool[]: v.bools (bytes, 0 or 1) */
  CRUCIBLE_DTYPE = 11,          /* ScalarType: v.dtype (as in DLTensor.dtype) */
  CRUCIBLE_DEVICE = 12,         /* Device: v.device */
  CRUCIBLE_LAYOUT = 13,         /* Layout: v.layout (crucible_layout) */
  CRUCIBLE_MEMORY_FORMAT = 14   /* MemoryFormat: v.memory_format (crucible_memory_format) */
} crucible_value_kind;

/* A Scalar argument arrives as CRUCIBLE_INT, CRUCIBLE_FLOAT or CRUCIBLE_BOOL: its kind takes part
 * in type promotion, as in ATen. A Python number given where the schema says Tensor (a "wrapped
 * number", add.Tensor(x, 2)) arrives the same way: as a number, not a tensor. */

typedef enum crucible_layout { CRUCIBLE_STRIDED = 0, CRUCIBLE_SPARSE_COO = 1 } crucible_layout;

typedef enum crucible_memory_format {
  CRUCIBLE_CONTIGUOUS_FORMAT = 0,
  CRUCIBLE_PRESERVE_FORMAT = 1,
  CRUCIBLE_CHANNELS_LAST = 2,
  CRUCIBLE_CHANNELS_LAST_3D = 3
} crucible_memory_format;

typedef struct crucible_value {
  int32_t kind; /* crucible_value_kind */
  int32_t reserved;
  union {
    DLTensor* tensor;
    int64_t i;
    double f;
    int32_t b;
    const char* s;
    struct {
      DLTensor* const* items;
      int64_t size;
    } tensors;
    struct {
      const int64_t* items;
      int64_t size;
    } ints;
    struct {
      const double* items;
      int64_t size;
    } floats;
    struct {
      const uint8_t* items;
      int64_t size;
    } bools;
    DLDataType dtype;
    DLDevice device;
    int32_t layout;
    int32_t memory_format;
  } v;
} crucible_value;

typedef struct crucible_call crucible_call;

/* One call of a kernel. Everything is owned by crucible and valid during the call only. */
struct crucible_call {
  uint32_t abi_version; /* CRUCIBLE_KERNEL_ABI_VERSION of the crucible that calls */
  uint32_t struct_size; /* sizeof(crucible_call) of that crucible */
  const char* op;       /* "aten.add.Tensor" */

  /* The op's arguments in schema order, defaults filled in. Kernels must not write into input
   * tensors, except those the schema marks as mutated (Tensor(a!): self of add_, out=). */
  const crucible_value* args;
  int32_t num_args;

  /* The op's returns in schema order. Tensor returns are CRUCIBLE_TENSOR (a Tensor[] return is
   * CRUCIBLE_TENSOR_LIST) with:
   *  - a fresh return (`Tensor`): data allocated by crucible with its shape, strides and dtype;
   *    write every element. Do not change the DLTensor's fields.
   *  - a data-dependent one (only ops such as nonzero): data == NULL, ndim == 0; allocate it
   *    with alloc_output before writing.
   *  - a view return (`Tensor(a)`): allocated like a fresh one; make_view turns it into a view
   *    of an input instead.
   *  - a mutated argument (`Tensor(a!)`): the argument's own DLTensor; write in place.
   * Number returns (`int`, `float`, `bool`, `Scalar`) come with their kind set; write v.i, v.f
   * or v.b (a Scalar return may change its kind among INT, FLOAT and BOOL). */
  crucible_value* outputs;
  int32_t num_outputs;

  /* The device stream to launch on (cudaStream_t for CUDA), NULL on the CPU. crucible
   * synchronizes after the call. */
  void* stream;
  /* Random ops draw from a generator seeded with this (the same seed must give the same
   * values). */
  uint64_t seed;
  /* Threads the kernel may use (1 while crucible runs several workers side by side). */
  int32_t num_threads;
  int32_t reserved;

  /* Where a kernel writes why it returned a status other than CRUCIBLE_OK (NUL-terminated,
   * truncated to error_size). */
  char* error;
  size_t error_size;

  /* Allocates a data-dependent output: `out` is one of call->outputs' DLTensors whose data is
   * NULL; it gets `ndim` dims of `shape`, contiguous strides and `dtype`. Returns CRUCIBLE_OK or
   * CRUCIBLE_INTERNAL (with call->error set). */
  int32_t (*alloc_output)(crucible_call* call, DLTensor* out, int32_t ndim, const int64_t* shape,
                          DLDataType dtype);
  /* Makes a view output (`Tensor(a)` return) a view of input tensor `base` (an argument's
   * DLTensor): `ndim` dims of `shape` and `strides` (in elements), starting `offset` elements
   * after base's first element. Returns CRUCIBLE_OK, or CRUCIBLE_ERROR when the view would
   * reach outside base's storage or `out` is not a view return. */
  int32_t (*make_view)(crucible_call* call, DLTensor* out, const DLTensor* base, int32_t ndim,
                       const int64_t* shape, const int64_t* strides, int64_t offset);

  void* crucible_private; /* crucible's own; do not touch */
};

/* A kernel: runs one call of its op. */
typedef int32_t (*crucible_kernel_fn)(crucible_call* call);

/* Optional: whether the kernel handles this call (dtypes, layouts, argument values), asked
 * before each call with the call's arguments (call->outputs is NULL). Returns CRUCIBLE_OK, or
 * CRUCIBLE_UNSUPPORTED with the reason in call->error. NULL means every call of the op. */
typedef int32_t (*crucible_supports_fn)(crucible_call* call);

typedef struct crucible_kernel_entry {
  const char* op; /* "aten.relu.default" (the "aten." prefix may be left out) */
  crucible_kernel_fn fn;
  crucible_supports_fn supports; /* optional, NULL */
} crucible_kernel_entry;

/* What a plugin library describes of itself. */
typedef struct crucible_plugin {
  uint32_t abi_version; /* CRUCIBLE_KERNEL_ABI_VERSION the library was built with */
  uint32_t struct_size; /* sizeof(crucible_plugin) */
  const char* name;     /* "my-backend" */
  const char* version;  /* optional, NULL: shown in the run's manifest */
  DLDevice device;      /* {kDLCPU, 0}: the device its kernels run on */
  const crucible_kernel_entry* kernels;
  int64_t num_kernels;
} crucible_plugin;

/* The entry point: returns the library's description (static storage; called once). */
typedef const crucible_plugin* (*crucible_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CRUCIBLE_KERNEL_H_ */
