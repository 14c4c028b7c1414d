// Materialised inputs are pinned: the bytes drawn for a case are a function of the op, the call
// and the seed alone, the same on every build (runs, their histories and saved reproducers
// compare inputs across builds). The hashes below were taken from the scalar drawing (one
// Rng::normal() at a time, each stored with store_from_double); any change to how the values
// are drawn or converted must keep them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/cases/case.h"
#include "crucible/core/rng.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"

namespace crucible {
namespace {

// The hash of every tensor's whole storage, in argument order.
uint64_t inputs_hash(const std::string& op, const std::string& call, uint64_t seed) {
  const Values args = materialize(OpRegistry::catalog().get(op), cases::parse_call(call), seed);
  uint64_t h = 0;
  for (const Value& v : args) {
    if (!v.is_tensor() || !v.tensor().defined()) continue;
    const auto& s = v.tensor().storage();
    h = hash64(s->data(), s->nbytes(), h);
  }
  return h;
}

struct Pinned {
  const char* op;
  const char* call;
  uint64_t seed;
  uint64_t hash;
};

// Standard normal data in every floating dtype, lengths odd and even, below and above the
// sizes drawn in parallel, strided storage, a NaN-free index fill after normal data ('oob'
// draws its index from the stream the normals left), and another seed.
const Pinned kPinned[] = {
    {"aten.add.Tensor", "((T([1001, 37], f16), T([1001, 37], f16)), {})", 0, 0xdcb4738be625d2e3},
    {"aten.add.Tensor", "((T([3, 70001], f32), T([70001], f32)), {})", 0, 0xe543e4c8c475f98b},
    {"aten.add.Tensor", "((T([513, 257], bf16), T([1], bf16)), {})", 0, 0x7a1f7c1efbeee218},
    {"aten.add.Tensor", "((T([4097, 3], f64), T([4097, 3], f64)), {})", 0, 0xe961e7a1f984665e},
    {"aten.add.Tensor", "((T([64, 33], f16, stride=(40, 1)), T([33], f32)), {})", 0,
     0xbbb3593f5b0610cc},
    {"aten.add.Tensor", "((T([262145], f16), T([262145], f16)), {})", 7, 0xdb819736c67c887c},
    {"aten.add.Tensor", "((T([131073], f32, fill='oob'), T([5], f32)), {})", 3, 0xfc58e10bd0d0222c},
    {"aten.mul.Tensor", "((T([2, 3, 1025], bf16), T([2, 3, 1025], f32)), {})", 11,
     0xc3300ffdc7f0efb6},
};

TEST(MaterializeBits, InputsArePinned) {
  for (const Pinned& p : kPinned)
    EXPECT_EQ(fmt::format("{:#018x}", inputs_hash(p.op, p.call, p.seed)),
              fmt::format("{:#018x}", p.hash))
        << p.op << " " << p.call << " seed " << p.seed;
}

}  // namespace
}  // namespace crucible
