// Device support of the aten backend: seeding, CUDA memory, transfers, synchronisation and
// timing. Internal to the aten backend; the CUDA parts go through libtorch's device-generic
// interfaces, so no CUDA header is needed to build them.
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible::aten {

// Seeds libtorch's default generator of `d` (the CPU's, or the CUDA device's).
void seed_generator(Device d, uint64_t seed);

// Throws a Usage error naming `spec` when libtorch has no CUDA or `d` does not exist. The check
// runs in a short-lived child process, so that this process (which forks the workers) never
// initialises CUDA; the answer is remembered.
void check_cuda_device(const std::string& spec, Device d);

Tensor device_allocate(Device d, const Shape& shape, const Shape& strides, DType dtype);
// A copy of `t`'s whole storage on `target`, viewed with `t`'s offset, shape and strides.
Tensor copy_storage(const Tensor& t, Device target);
void device_synchronize(Device d);
// After an error on device `d`: whether its context is broken for good (a device-side assert, an
// illegal address: every later call fails). Such a process must not run another case.
bool device_context_broken(Device d);
std::unique_ptr<DeviceTimer> make_device_timer(Device d);

}  // namespace crucible::aten
