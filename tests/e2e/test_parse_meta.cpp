// `crucible parse --meta`: a trace file checked with the meta layer alone, without computing
// anything: every call's outputs printed, invalid calls named with file:line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

TEST(E2EParseMeta, PrintsEveryCallsOutputsAndNamesInvalidCalls) {
  const std::string dir = temp_dir("parse-meta");
  const std::string file = dir + "/t.txt";
  {
    std::ofstream f(file);
    // A matrix product far too large to compute here (2^40 multiply-adds): the meta layer
    // only reads shapes. Then a product whose shapes do not chain, a view and nonzero.
    f << "Operator: aten.mm.default\n"
         "cnt: 1, ((T([65536, 4096], f16), T([4096, 4096], f16)), {})\n"
         "cnt: 2, ((T([2, 3], f32), T([4, 5], f32)), {})\n"
         "Operator: aten.t.default\n"
         "cnt: 1, ((T([3, 7], f32),), {})\n"
         "Operator: aten.nonzero.default\n"
         "cnt: 1, ((T([5, 6], f32),), {})\n";
  }
  Output o = crucible("parse --meta " + file);
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("((T([65536, 4096], f16), T([4096, 4096], f16)), {}) -> T([65536, 4096], "
                       "f16)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find(file + ":3: aten.mm.default is an invalid call: "), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("-> T([7, 3], f32, stride=(1, 7))"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("-> T([30, 2], i64) (sizes data-dependent: upper bounds)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("meta: 4 call(s) checked, 1 invalid"), std::string::npos) << o.out;
  // Without the invalid call, the file is clean: exit status 0.
  {
    std::ofstream f(file);
    f << "Operator: aten.t.default\ncnt: 1, ((T([3, 7], f32),), {})\n";
  }
  o = crucible("parse --meta -q " + file);
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("meta: 1 call(s) checked, 0 invalid"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace crucible::e2e
