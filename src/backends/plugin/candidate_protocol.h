// What a trusted worker and its candidate process say to each other (over channel.h frames, in
// wire.h's byte format). The candidate process sees tensors only as places in the call's shared
// arena; it answers with its kernel's status and message and what became of each output. Every
// reply is parsed by the trusted side as untrusted data (bounded, validated).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/plugin/wire.h"
#include "crucible/core/value.h"
#include "crucible/kernel.h"

namespace crucible {

enum class HostRequest : uint8_t {
  Ping = 1,         // answered at once (on CUDA: after an empty device synchronise)
  Supports = 2,     // the supports hook
  Call = 3,         // a kernel call (its second byte: CallFlags)
  FlushL2 = 4,      // CUDA: write a buffer larger than the L2 and wait for it; answers a byte
  EmptySample = 5,  // CUDA, before any kernel code is loaded: the timed region around no call;
                    // answers the event time (u64 nanoseconds)
  // CUDA, between two timed calls (outside the timed region): copies the listed ranges of a
  // known arena (a timed call's fresh outputs) from the device into the shared arena, then
  // fills them on the device with the given byte; answers a byte (1: done) and an error text.
  TimedOutputs = 6,
};

// The second byte of a Call request.
enum CallFlags : uint8_t {
  kCallUpload = 1,    // CUDA: copy the arena to the device before the call
  kCallDownload = 2,  // CUDA: copy the device's arena back and check its guard pages after it
  // A timing loop's repeated call (no defences): of the process state only its threads are
  // compared after it, since a thread left at work would take the baseline's processor; what
  // else a kernel changes there touches only its own process and its next judged call's check.
  kCallRepeat = 4,
};

// Statuses the candidate process reports besides crucible_status.
inline constexpr int32_t kHostOutOfMemory = -1000;  // std::bad_alloc escaped the kernel
inline constexpr int32_t kHostThrew = -1001;        // another C++ exception escaped it
inline constexpr int32_t kHostBadRequest = -1002;   // the request did not make sense to it
inline constexpr int32_t kHostDeviceError = -1003;  // CUDA reported an error after the call
inline constexpr int32_t kHostDeviceGuard = -1004;  // the device copy of a guard page changed

// Bounds on what either side accepts.
inline constexpr uint32_t kMaxWireValues = 4096;
inline constexpr uint32_t kMaxWireString = 1 << 16;
inline constexpr size_t kMaxReplyBytes = size_t{1} << 34;  // data-dependent outputs included
inline constexpr size_t kMaxMessageChars = 4096;           // a kernel's error message

// A tensor as a place in the arena: the byte offset of its first element (kNoData: none, as in
// the supports hook), dtype, shape and strides in elements.
inline constexpr uint64_t kNoData = ~uint64_t{0};
struct TensorRef {
  uint64_t offset = kNoData;
  uint8_t dtype = 0;
  std::vector<int64_t> shape, strides;
};

void put_tensor_ref(WireWriter& w, const TensorRef& t);
TensorRef get_tensor_ref(WireReader& r);

// Output slots as the request describes them (mirrors OutputSlot::Kind).
enum class WireSlot : uint8_t {
  Fresh = 0,
  View = 1,
  Mutated = 2,
  DataDependent = 3,
  Number = 4,
  FreshList = 5
};

// What became of one tensor output in the candidate process.
enum class OutHow : uint8_t {
  AsGiven = 0,    // the DLTensor is as crucible laid it out: read the arena
  MadeView = 1,   // make_view: a view of an argument tensor
  Allocated = 2,  // alloc_output: the bytes travel in the reply
  Changed = 3,    // the kernel changed the DLTensor's fields: `cause` says how
  Missing = 4,    // a data-dependent output the kernel never allocated
};

}  // namespace crucible
