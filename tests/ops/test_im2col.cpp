// ATen semantics of im2col, col2im and im2col_backward: block layout, padding, stride and
// dilation (expected values computed with torch), ATen's shape checks, and every correctness
// sample materialising and running.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& im2col_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_im2col_ops(*reg);
    return reg;
  }();
  return *r;
}

using Ints = std::vector<int64_t>;

Tensor arange(const Shape& shape, double scale, double shift, DType t = DType::Float64) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i) * scale + shift);
  return x;
}

Tensor call(const std::string& op, const Tensor& x, std::vector<Ints> lists) {
  Values args{x};
  for (Ints& l : lists) args.emplace_back(std::move(l));
  return im2col_ops().get(op).run_ref(args)[0].tensor();
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expect) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expect.size()));
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_DOUBLE_EQ(t.get(i), expect[i]) << "at " << i;
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

// torch: im2col(arange(18.).reshape(1,2,3,3), [2,2], [1,1], [1,0], [2,1]).
TEST(Im2col, BlocksFromTorch) {
  const Tensor y =
      call("aten.im2col.default", arange({1, 2, 3, 3}, 1, 0), {{2, 2}, {1, 1}, {1, 0}, {2, 1}});
  EXPECT_EQ(y.dtype(), DType::Float64);
  expect_values(y, {1, 8, 4}, {0, 0, 3,  4,  0, 0, 4,  5,  0, 1,  6,  7,  1,  2,  7,  8,
                               0, 0, 12, 13, 0, 0, 13, 14, 9, 10, 15, 16, 10, 11, 16, 17});
  // Unbatched input gives a 2-d result.
  EXPECT_EQ(call("aten.im2col.default", arange({2, 3, 3}, 1, 0), {{2, 2}, {1, 1}, {1, 0}, {2, 1}})
                .shape(),
            Shape({8, 4}));
}

TEST(Im2col, FoldFromTorch) {
  // torch: col2im(arange(16.).reshape(1,4,4) - 5, (3,3), [2,2], [1,1], [0,0], [1,1]).
  expect_values(call("aten.col2im.default", arange({1, 4, 4}, 1, -5),
                     {{3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}}),
                {1, 1, 3, 3}, {-5, -5, 0, 0, 10, 10, 5, 15, 10});
  // torch: col2im(arange(32.).reshape(1,8,4), (3,4), [2,2], [1,1], [1,0], [2,2]).
  expect_values(call("aten.col2im.default", arange({1, 8, 4}, 1, 0),
                     {{3, 4}, {2, 2}, {1, 1}, {1, 0}, {2, 2}}),
                {1, 2, 3, 4}, {8,  12, 9,  13, 2,  6,  3,  7,  10, 14, 11, 15,
                               24, 28, 25, 29, 18, 22, 19, 23, 26, 30, 27, 31});
  // torch: col2im(arange(12.).reshape(2,6) * 0.5, (4,3), [2,1], [2,1], [0,0], [1,1]) (unbatched).
  expect_values(
      call("aten.col2im.default", arange({2, 6}, 0.5, 0), {{4, 3}, {2, 1}, {2, 1}, {0, 0}, {1, 1}}),
      {1, 4, 3}, {0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5});
  // im2col_backward is col2im with output_size = input_size.
  const Tensor g = arange({1, 8, 4}, 1, 0);
  const Tensor a =
      call("aten.im2col_backward.default", g, {{3, 4}, {2, 2}, {1, 1}, {1, 0}, {2, 2}});
  const Tensor b = call("aten.col2im.default", g, {{3, 4}, {2, 2}, {1, 1}, {1, 0}, {2, 2}});
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.get(i), b.get(i));
}

TEST(Im2col, ChecksLikeATen) {
  const Tensor x = arange({1, 2, 4, 4}, 1, 0, DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.im2col.default", x, {{0, 2}, {1, 1}, {0, 0}, {1, 1}});
            }),
            "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 2");
  EXPECT_EQ(op_error_of([&] {
              call("aten.im2col.default", x, {{2}, {1, 1}, {0, 0}, {1, 1}});
            }),
            "It is expected kernel_size equals to 2, but got size 1");
  EXPECT_EQ(op_error_of([&] {
              call("aten.im2col.default", x, {{2, 2}, {1, 1}, {-1, 0}, {1, 1}});
            }),
            "padding should be non-negative, but got pad_height: -1 pad_width: 0");
  EXPECT_EQ(
      op_error_of([&] {
        call("aten.im2col.default", arange({1, 2, 2, 4}, 1, 0), {{3, 2}, {1, 1}, {0, 0}, {1, 1}});
      }),
      "Given input with spatial size (2, 4), kernel_size=(3, 2), dilation=(1, 1), "
      "padding=(0, 0), calculated shape of the array of sliding blocks as (0, 3), but its "
      "components must be at least one.");
  EXPECT_EQ(op_error_of([&] {
              call("aten.col2im.default", arange({1, 7, 9}, 1, 0),
                   {{4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}});
            }),
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            "but got input.size(1)=7 and kernel_size=(2, 2).");
  EXPECT_EQ(op_error_of([&] {
              call("aten.col2im.default", arange({1, 8, 8}, 1, 0),
                   {{4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}});
            }),
            "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
            "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
            "sliding blocks 3 * 3 = 9, but got input.size(2)=8.");
  // Integer inputs are not implemented on the CPU.
  EXPECT_EQ(op_error_of([&] {
              call("aten.im2col.default", Tensor::zeros({1, 2, 4, 4}, DType::Int64),
                   {{2, 2}, {1, 1}, {0, 0}, {1, 1}});
            }),
            "\"im2col_out_cpu\" not implemented for 'Long'");
}

TEST(Im2col, SamplesMaterialiseAndRun) {
  for (const char* name :
       {"aten.im2col.default", "aten.col2im.default", "aten.im2col_backward.default"}) {
    const OpDef& op = im2col_ops().get(name);
    const auto samples = op.samples(SampleContext{false});
    EXPECT_GE(samples.size(), 8u) << name;
    for (const Sample& s : samples) {
      const Values args = materialize(op, s.call, 5);
      bool raised = false;
      try {
        op.run_ref(args);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << s.label << ": " << e.what();
        raised = true;
      }
      EXPECT_EQ(raised, s.label.rfind("error:", 0) == 0) << name << ": " << s.label;
    }
    EXPECT_FALSE(op.samples(SampleContext{true}).empty()) << name;
  }
}

}  // namespace
}  // namespace crucible
