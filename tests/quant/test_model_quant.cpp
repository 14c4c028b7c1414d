// `crucible run --suite model --quant <recipe>`: a model graph run quantized, its error against
// the unquantized f64 golden and its time against the unquantized model reported; a recipe
// outside the grammar refused by the flag's name before anything runs.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

TEST(ModelQuant, QuantizedModelReportsErrorAgainstGoldenAndTime) {
  const std::string dir = temp_dir("model-quant");
  const Output o = crucible(fmt::format(
      "run --suite model --backend cpu --model-filter gpt2-tiny-fwd --quant int8dq --out {}/run -q",
      dir));
  ASSERT_EQ(o.status, 0) << o.out;
  int cases = 0;
  for (const nlohmann::json& r : read_jsonl(dir + "/run/results.jsonl")) {
    if (r.value("record", "") != "case") continue;
    ++cases;
    EXPECT_EQ(r["status"], "passed") << r.dump();
    const std::string detail = r["detail"];
    EXPECT_NE(detail.find("recipe int8dq on 9 linear layers"), std::string::npos) << detail;
    EXPECT_NE(detail.find("SQNR vs f64 golden"), std::string::npos) << detail;
    EXPECT_NE(detail.find("vs unquantized"), std::string::npos) << detail;
  }
  EXPECT_EQ(cases, 1);
}

TEST(ModelQuant, AnUnknownRecipeIsRefusedByTheFlag) {
  const Output o = crucible("run --suite model --backend cpu --quant int9dq --out /dev/null/x");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--quant: unknown quantization recipe 'int9dq'"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("the closest is 'int8dq'"), std::string::npos) << o.out;
  const Output p = crucible("run --suite smoke --backend cpu --quant int8dq --out /dev/null/x");
  EXPECT_EQ(p.status, 2) << p.out;
  EXPECT_NE(p.out.find("--quant applies to --suite model"), std::string::npos) << p.out;
}

}  // namespace
}  // namespace crucible::e2e
