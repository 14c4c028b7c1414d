// Tensor: storage, layout, views (sharing storage), copies, conversions and printing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible {
namespace {

Tensor arange(const Shape& shape, DType dtype = DType::Float32) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i));
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

template <typename F>
std::string op_error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    return e.what();
  }
  ADD_FAILURE() << "no error raised";
  return "";
}

TEST(Storage, AlignedAndZeroSizeAllocations) {
  auto s = Storage::allocate_cpu(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 64, 0u);
  EXPECT_EQ(s->nbytes(), 10u);
  auto z = Storage::allocate_cpu(0);
  EXPECT_NE(z->data(), nullptr);
  EXPECT_EQ(z->nbytes(), 0u);
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  EXPECT_TRUE(e.defined());
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.storage()->nbytes(), 0u);
}

TEST(Storage, AllocationLimit) {
  const size_t before = bytes_allocated();
  {
    auto s = Storage::allocate_cpu(1000);
    EXPECT_EQ(bytes_allocated(), before + 1000);
  }
  EXPECT_EQ(bytes_allocated(), before);
  set_allocation_limit(before + 4096);
  EXPECT_EQ(allocation_limit(), before + 4096);
  try {
    Storage::allocate_cpu(8192);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Memory);
    EXPECT_EQ(std::string(e.what()), "allocation of 8192 bytes exceeds the memory limit of " +
                                         std::to_string(before + 4096) + " bytes");
  }
  EXPECT_EQ(bytes_allocated(), before);
  EXPECT_NO_THROW(Storage::allocate_cpu(4096));
  set_allocation_limit(0);
}

TEST(Storage, ExternalMemoryUsesDeleter) {
  static int freed = 0;
  float buf[4] = {1, 2, 3, 4};
  {
    auto s = std::make_shared<Storage>(buf, sizeof(buf), Device::cpu(), [](void*) { ++freed; });
    Tensor t = Tensor::from_storage(s, 1, {2}, {2}, DType::Float32);
    EXPECT_EQ(values(t), (std::vector<double>{2, 4}));
  }
  EXPECT_EQ(freed, 1);
}

TEST(Tensor, ShapeStridesAndStr) {
  Tensor t = Tensor::empty({2, 3}, DType::Float32);
  EXPECT_EQ(t.strides(), (Shape{3, 1}));
  EXPECT_EQ(t.str(), "T([2, 3], f32)");
  EXPECT_EQ(t.transpose(0, 1).str(), "T([3, 2], f32, stride=(1, 3))");
  EXPECT_EQ(Tensor::empty({6}, DType::Float16).slice(0, 0, 6, 2).str(), "T([3], f16, stride=(2,))");
  EXPECT_EQ(Tensor::scalar(1, DType::Int64).str(), "T([], i64)");
  EXPECT_EQ(Tensor().str(), "None");
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_EQ(t.stride(0), 3);
  EXPECT_EQ(t.itemsize(), 4u);
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Shape{3, 3, 1}));
  EXPECT_EQ(shape_str({}), "[]");
}

TEST(Tensor, WrapDim) {
  EXPECT_EQ(wrap_dim(-1, 2), 1);
  EXPECT_EQ(wrap_dim(0, 0), 0);
  EXPECT_EQ(wrap_dim(-1, 0), 0);
  EXPECT_EQ(op_error_message([] { wrap_dim(5, 2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 5)");
  EXPECT_EQ(op_error_message([] { wrap_dim(1, 0); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  Tensor s = Tensor::scalar(2, DType::Float32);
  EXPECT_THROW(s.size(0), Error);
}

TEST(Tensor, FactoriesAndNegativeSizes) {
  Tensor f = Tensor::full({2, 2}, 1.5, DType::BFloat16);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
  EXPECT_EQ(values(Tensor::zeros({3}, DType::Int32)), (std::vector<double>{0, 0, 0}));
  Tensor s = Tensor::scalar(7, DType::Int8);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.get(0), 7);
  EXPECT_EQ(op_error_message([] {
              Tensor::empty({2, -1}, DType::Float32);
            }),
            "Trying to create tensor with negative dimension -1: [2, -1]");
  Tensor es = Tensor::empty_strided({2, 3}, {1, 2}, DType::Float64);
  EXPECT_EQ(es.storage()->nbytes(), 6u * 8);
  EXPECT_FALSE(es.is_contiguous());
}

TEST(Tensor, ElementAccessAllDtypes) {
  for (DType t : all_dtypes()) {
    Tensor x = Tensor::empty({2, 2}, t);
    x.set(3, 1.0);
    EXPECT_EQ(x.get(3), 1.0) << dtype_code(t);
    x.set_int(1, 0);
    EXPECT_EQ(x.get_int(1), 0) << dtype_code(t);
  }
  Tensor i = Tensor::empty({1}, DType::Int64);
  i.set_int(0, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i.get_int(0), std::numeric_limits<int64_t>::max());
  Tensor h = Tensor::empty({1}, DType::Float16);
  h.set(0, 0.1);
  EXPECT_EQ(*h.data<uint16_t>(), half_from_double(0.1));
  EXPECT_THROW(h.get(1), Error);
}

TEST(Tensor, ConversionsRoundOnceAndTruncate) {
  Tensor f = Tensor::empty({8}, DType::Float64);
  const double vals[] = {2.7, -2.7, 300.5, -0.5, 1e10, std::nan(""), 65519.0, 1e-8};
  for (int i = 0; i < 8; ++i) f.set(i, vals[i]);
  Tensor i32 = f.to(DType::Int32);
  EXPECT_EQ(i32.get_int(0), 2);
  EXPECT_EQ(i32.get_int(1), -2);
  EXPECT_EQ(i32.get_int(2), 300);
  EXPECT_EQ(i32.get_int(3), 0);
  EXPECT_EQ(i32.get_int(4), std::numeric_limits<int32_t>::min());  // x86 cvttsd2si
  EXPECT_EQ(i32.get_int(5), std::numeric_limits<int32_t>::min());
  Tensor u8 = f.to(DType::UInt8);
  EXPECT_EQ(u8.get_int(1), 254);  // -2 wrapped
  EXPECT_EQ(u8.get_int(2), 44);   // 300 wrapped
  Tensor i64 = f.to(DType::Int64);
  EXPECT_EQ(i64.get_int(5), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64.get_int(4), 10000000000);
  Tensor b = f.to(DType::Bool);
  EXPECT_EQ(values(b), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Tensor::full({1}, 0.0, DType::Float32).to(DType::Bool).get(0), 0);
  Tensor h = f.to(DType::Float16);
  EXPECT_EQ(h.get(6), 65504.0);
  EXPECT_TRUE(std::isnan(h.get(5)));
  // Integer to integer wraps like a C++ cast.
  Tensor big = Tensor::full({1}, 0, DType::Int64);
  big.set_int(0, (int64_t{1} << 40) + 129);
  EXPECT_EQ(big.to(DType::Int8).get_int(0), -127);
  EXPECT_EQ(big.to(DType::Int32).get_int(0), 129);
  // int64 -> bf16 is rounded once: 2^60 + 2^52 + 1 is just above a tie.
  big.set_int(0, (int64_t{1} << 60) + (int64_t{1} << 52) + 1);
  EXPECT_EQ(big.to(DType::BFloat16).get(0), std::ldexp(1.0, 60) + std::ldexp(1.0, 53));
  big.set_int(0, (int64_t{1} << 60) + (int64_t{1} << 52));
  EXPECT_EQ(big.to(DType::BFloat16).get(0), std::ldexp(1.0, 60));
}

TEST(Tensor, CloneIsBitExactAndContiguous) {
  Tensor h = Tensor::empty({2}, DType::Float16);
  h.data<uint16_t>()[0] = 0x7D01;  // a NaN with a payload
  h.data<uint16_t>()[1] = 0x8000;
  Tensor c = h.clone();
  EXPECT_NE(c.storage(), h.storage());
  EXPECT_EQ(c.data<uint16_t>()[0], 0x7D01);
  EXPECT_EQ(c.data<uint16_t>()[1], 0x8000);
  Tensor t = arange({2, 3}).transpose(0, 1);
  Tensor tc = t.clone();
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(values(tc), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor a = arange({4});
  EXPECT_EQ(a.contiguous().storage(), a.storage());
  EXPECT_NE(t.contiguous().storage(), t.storage());
}

TEST(Tensor, ViewSharesStorageAndInfers) {
  Tensor a = arange({2, 3, 4});
  Tensor v = a.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_TRUE(v.shares_storage(a));
  v.set(0, 42);
  EXPECT_EQ(a.get(0), 42);
  // A transposed tensor can merge some dims but not others.
  Tensor t = arange({4, 6}).transpose(0, 1);  // [6, 4] strides (1, 6)
  EXPECT_EQ(t.view({2, 3, 4}).strides(), (Shape{3, 1, 6}));
  EXPECT_EQ(op_error_message([&] { t.view({24}); }),
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  EXPECT_EQ(op_error_message([&] {
              a.view({5, -1});
            }),
            "shape '[5, -1]' is invalid for input of size 24");
  EXPECT_EQ(op_error_message([&] { a.view({-1, -1}); }), "only one dimension can be inferred");
  // 0-d and empty tensors.
  Tensor s = Tensor::scalar(3, DType::Float32);
  EXPECT_EQ(s.view({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(s.view({-1}).shape(), (Shape{1}));
  EXPECT_EQ(s.view({1, 1}).view({}).dim(), 0);
  EXPECT_THROW(a.view({}), Error);
}

TEST(Tensor, ViewOfEmpty) {
  Tensor e = Tensor::empty({0, 4}, DType::Float32);
  EXPECT_EQ(e.view({4, 0}).shape(), (Shape{4, 0}));
  EXPECT_EQ(e.view({2, 0, 2}).strides(), (Shape{2, 2, 1}));
  EXPECT_THROW(e.view({-1, 0}), Error);
  EXPECT_EQ(e.reshape({0}).numel(), 0);
}

TEST(Tensor, ReshapeCopiesOnlyWhenNeeded) {
  Tensor a = arange({2, 3});
  EXPECT_TRUE(a.reshape({3, 2}).shares_storage(a));
  Tensor t = a.transpose(0, 1);
  Tensor r = t.reshape({6});
  EXPECT_FALSE(r.shares_storage(a));
  EXPECT_EQ(values(r), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Tensor, PermuteTransposeUnsqueeze) {
  Tensor a = arange({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_EQ(p.get(1), a.get(4));  // p[0][0][1] == a[0][1][0]
  EXPECT_THROW(a.permute({0, 1}), Error);
  EXPECT_EQ(op_error_message([&] {
              a.permute({0, 0, 1});
            }),
            "permute(): duplicate dims are not allowed.");
  EXPECT_EQ(a.transpose(-1, 0).shape(), (Shape{4, 3, 2}));
  Tensor s = Tensor::scalar(1, DType::Float32);
  EXPECT_EQ(s.transpose(0, -1).dim(), 0);
  EXPECT_EQ(a.unsqueeze(1).shape(), (Shape{2, 1, 3, 4}));
  EXPECT_EQ(a.unsqueeze(1).strides(), (Shape{12, 12, 4, 1}));
  EXPECT_EQ(a.unsqueeze(-1).strides(), (Shape{12, 4, 1, 1}));
  EXPECT_EQ(s.unsqueeze(0).shape(), (Shape{1}));
  EXPECT_THROW(a.unsqueeze(4), Error);
}

TEST(Tensor, ExpandUsesZeroStrides) {
  Tensor a = arange({3, 1});
  Tensor e = a.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (Shape{0, 1, 0}));
  EXPECT_TRUE(e.shares_storage(a));
  EXPECT_EQ(e.get(23), 2);
  EXPECT_EQ(a.expand({-1, 5}).shape(), (Shape{3, 5}));
  EXPECT_EQ(op_error_message([&] {
              a.expand({4, 2});
            }),
            "The expanded size of the tensor (4) must match the existing size (3) at "
            "non-singleton dimension 0.  Target sizes: [4, 2].  Tensor sizes: [3, 1]");
  EXPECT_THROW(a.expand({3}), Error);
  EXPECT_THROW(a.expand({-1, 3, 1}), Error);
  EXPECT_EQ(Tensor::scalar(5, DType::Float32).expand({2, 2}).strides(), (Shape{0, 0}));
  EXPECT_EQ(a.expand({3, 0}).numel(), 0);
}

TEST(Tensor, AsStridedSelectSlice) {
  Tensor a = arange({10});
  Tensor w = a.as_strided({3, 3}, {3, 1}, 1);
  EXPECT_EQ(values(w), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  Tensor o = a.as_strided({4, 3}, {2, 1}, 0);  // overlapping windows
  EXPECT_EQ(o.get(3), 2);
  EXPECT_THROW(a.as_strided({4, 3}, {3, 1}, 0), Error);  // needs 11 elements
  EXPECT_THROW(a.as_strided({2}, {-1}, 5), Error);

  Tensor m = arange({3, 4});
  Tensor row = m.select(0, -1);
  EXPECT_EQ(row.offset(), 8);
  EXPECT_EQ(values(row), (std::vector<double>{8, 9, 10, 11}));
  Tensor col = m.select(1, 2);
  EXPECT_EQ(values(col), (std::vector<double>{2, 6, 10}));
  EXPECT_EQ(m.select(0, 1).select(0, 1).dim(), 0);
  EXPECT_EQ(op_error_message([&] { m.select(0, 3); }),
            "select(): index 3 out of range for tensor of size [3, 4] at dimension 0");
  EXPECT_THROW(Tensor::scalar(1, DType::Float32).select(0, 0), Error);

  Tensor s = m.slice(1, 1, 100, 2);
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.strides(), (Shape{4, 2}));
  EXPECT_EQ(values(s), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(m.slice(0, -2, std::numeric_limits<int64_t>::max()).shape(), (Shape{2, 4}));
  EXPECT_EQ(m.slice(0, 3, 1).shape(), (Shape{0, 4}));
  EXPECT_THROW(m.slice(0, 0, 3, 0), Error);
}

TEST(Tensor, ContiguityAndExtent) {
  Tensor m = arange({3, 4});
  EXPECT_TRUE(m.is_contiguous());
  EXPECT_TRUE(m.slice(0, 1, 2).is_contiguous());
  EXPECT_FALSE(m.slice(1, 0, 2).is_contiguous());
  EXPECT_TRUE(Tensor::empty({0, 5}, DType::Float32).transpose(0, 1).is_contiguous());
  EXPECT_TRUE(m.select(1, 0).unsqueeze(1).view({3, 1}).defined());
  EXPECT_EQ(m.slice(1, 1, 3).storage_extent(), (std::pair<int64_t, int64_t>{1, 11}));
  EXPECT_EQ(m.select(0, 2).storage_extent(), (std::pair<int64_t, int64_t>{8, 12}));
  EXPECT_EQ(m.slice(0, 1, 1).storage_extent(), (std::pair<int64_t, int64_t>{4, 4}));
}

TEST(Tensor, Overlaps) {
  Tensor m = arange({4, 4});
  EXPECT_TRUE(m.overlaps(m.select(0, 1)));
  EXPECT_FALSE(m.select(0, 1).overlaps(m.select(0, 2)));
  // Interleaved columns: extents intersect but no element is shared.
  EXPECT_FALSE(m.slice(1, 0, 4, 2).overlaps(m.slice(1, 1, 4, 2)));
  EXPECT_TRUE(m.slice(1, 0, 4, 2).overlaps(m.select(1, 2)));
  EXPECT_FALSE(m.overlaps(arange({4, 4})));
  EXPECT_FALSE(m.overlaps(m.slice(0, 0, 0)));
}

TEST(Tensor, CopyFromConvertsAndBroadcasts) {
  Tensor dst = Tensor::zeros({2, 3}, DType::Float16);
  dst.transpose(0, 1).copy_from(arange({3, 2}, DType::Int64));
  EXPECT_EQ(values(dst), (std::vector<double>{0, 2, 4, 1, 3, 5}));
  Tensor row = arange({3}, DType::Float64);
  dst.copy_from(row);
  EXPECT_EQ(values(dst), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  Tensor i = Tensor::empty({1}, DType::Int64);
  Tensor j = Tensor::empty({1}, DType::Int64);
  i.set_int(0, std::numeric_limits<int64_t>::max() - 1);
  j.copy_from(i);
  EXPECT_EQ(j.get_int(0), std::numeric_limits<int64_t>::max() - 1);
  // Overlapping source and destination behave as if the source were read first.
  Tensor a = arange({5});
  a.slice(0, 1, 5).copy_from(a.slice(0, 0, 4));
  EXPECT_EQ(values(a), (std::vector<double>{0, 0, 1, 2, 3}));
  EXPECT_THROW(dst.copy_from(arange({4})), Error);
}

// Same-dtype copies go a row at a time (a memcpy per contiguous row, typed words at other
// strides): every layout of source and destination, every element size, gives what an
// element-by-element copy gives, byte for byte.
TEST(Tensor, CopyFromTheSameDtypeMatchesAnElementwiseCopyInEveryLayout) {
  for (DType dt : {DType::Bool, DType::Int8, DType::Float16, DType::Float32, DType::Float64,
                   DType::Complex128}) {
    const Tensor src = arange({4, 5, 6}, dt);
    const std::vector<Tensor> sources = {src,
                                         src.transpose(1, 2),
                                         src.slice(2, 1, 6, 2),
                                         src.select(2, 3).unsqueeze(2),
                                         arange({6}, dt).expand({4, 5, 6}),
                                         src.transpose(0, 2).contiguous().transpose(0, 2)};
    for (const Tensor& from : sources) {
      for (int layout = 0; layout < 3; ++layout) {
        // 0: contiguous; 1: the last dimension 48 elements apart; 2: rows of a wider tensor.
        const Shape& sh = from.shape();
        Tensor base = Tensor::zeros({6, 6, 8}, dt);
        Tensor dst =
            layout == 0 ? Tensor::zeros(sh, dt)
            : layout == 1
                ? base.transpose(0, 2).slice(0, 0, sh[0]).slice(1, 0, sh[1]).slice(2, 0, sh[2])
                : base.slice(0, 0, sh[0]).slice(1, 0, sh[1]).slice(2, 1, 1 + sh[2]);
        ASSERT_EQ(dst.shape(), sh);
        dst.copy_from(from);
        const auto* d = static_cast<const char*>(dst.storage()->data());
        const auto* f = static_cast<const char*>(from.storage()->data());
        const size_t w = itemsize(dt);
        for (int64_t i = 0; i < from.numel(); ++i)
          ASSERT_EQ(0, std::memcmp(d + dst.storage_index(i) * w, f + from.storage_index(i) * w, w))
              << dtype_torch_name(dt) << " " << from.str() << " into layout " << layout
              << ", element " << i;
      }
    }
  }
}

TEST(Tensor, FillNonContiguous) {
  Tensor m = Tensor::zeros({3, 3}, DType::Int16);
  m.slice(1, 0, 3, 2).fill(7.9);
  EXPECT_EQ(values(m), (std::vector<double>{7, 0, 7, 7, 0, 7, 7, 0, 7}));
  Tensor e = Tensor::empty({0}, DType::Float32);
  EXPECT_NO_THROW(e.fill(1));
}

TEST(Tensor, BroadcastShapesAndIndexIteration) {
  EXPECT_EQ(broadcast_shapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_shapes({}, {2}), (Shape{2}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 5}), (Shape{0, 5}));
  EXPECT_EQ(op_error_message([] {
              broadcast_shapes({2, 3}, {2, 4});
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
  std::vector<Shape> seen;
  for_each_index({2, 2},
                 [&](std::span<const int64_t> i) { seen.emplace_back(i.begin(), i.end()); });
  EXPECT_EQ(seen, (std::vector<Shape>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  int calls = 0;
  for_each_index({}, [&](std::span<const int64_t> i) { calls += 1 + static_cast<int>(i.size()); });
  EXPECT_EQ(calls, 1);
  for_each_index({3, 0}, [&](std::span<const int64_t>) { ++calls; });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace crucible
