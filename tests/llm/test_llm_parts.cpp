// The parts of generation that need no model: the feedback and scoring cases, the prompt, the
// code extraction, the journal and the price table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/eval/generate.h"
#include "crucible/llm/journal.h"
#include "crucible/llm/prompt.h"
#include "crucible/llm/provider.h"
#include "e2e/cli_helpers.h"

namespace {

using crucible::OpRegistry;
namespace llm = crucible::llm;

TEST(GenerationCases, TheScoringCasesAreHeldOutFromTheFeedbackCases) {
  for (const char* name : {"aten.relu.default", "aten.add.Tensor", "aten.mm.default",
                           "aten._softmax.default", "aten.sum.dim_IntList"}) {
    const crucible::OpDef& op = OpRegistry::catalog().get(name);
    for (const char* suite : {"smoke", "opinfo"}) {
      const crucible::OpCases c = crucible::generation_cases(op, suite, 32);
      ASSERT_FALSE(c.feedback.empty()) << name;
      ASSERT_FALSE(c.scoring.empty()) << name;
      EXPECT_LE(c.scoring.size(), 32u) << name;
      EXPECT_EQ(c.held_out, "shapes") << name;
      std::set<std::string> feedback;
      for (const auto& g : c.feedback) feedback.insert(crucible::cases::print_call(g.call));
      std::set<std::string> scoring;
      for (const auto& g : c.scoring) {
        const std::string text = crucible::cases::print_call(g.call);
        EXPECT_FALSE(feedback.count(text)) << name << " " << suite << ": " << text;
        EXPECT_TRUE(scoring.insert(text).second) << name << ": twice: " << text;
      }
      // Must-raise calls are kept on both sides (grown calls still raise).
      const auto raising = [](const std::vector<crucible::GenCase>& v) {
        return std::count_if(v.begin(), v.end(), [](const auto& g) { return !g.error.empty(); });
      };
      if (raising(c.feedback) > 0 && std::string(suite) == "opinfo") {
        EXPECT_GT(raising(c.scoring), 0) << name;
      }
    }
  }
  EXPECT_NE(crucible::scoring_seed(0), 0u);
  EXPECT_NE(crucible::scoring_seed(0x5c0e1e55ULL), 0x5c0e1e55ULL);
}

TEST(Prompt, CarriesTheOpTheCasesTheAbiAndTheWholeHistory) {
  const crucible::OpDef& op = OpRegistry::catalog().get("aten.add.Tensor");
  const auto cases = crucible::generation_cases(op, "smoke", 8);
  std::vector<llm::PromptCase> shown;
  for (const auto& g : cases.feedback)
    shown.push_back({crucible::cases::print_call(g.call), g.label, g.error});
  std::vector<llm::PriorAttempt> history = {
      {1, "", "the provider failed: HTTP 500", "(no answer)"},
      {2, "int broken(", "did not compile", "error: expected ')' at the end of input"},
      {3, "int wrong() { return 0; }", "passed 3 of 16 feedback cases",
       "- aten.add.Tensor ((T([4], f32), T([4], f32)), {}) [failed]: wrong values"}};
  const std::string dir = llm::prompts_dir("");
  const std::string p = llm::build_prompt({&op, llm::Language::Cpp, shown, history}, dir);
  for (const std::string& want :
       {std::string("OP: aten.add.Tensor"), op.schema.str(), std::string("f16"),
        std::string("must raise"), std::string("#define CRUCIBLE_KERNEL"),
        std::string("add__Tensor_kernel_impl"), std::string("caching or replaying"),
        std::string("Earlier attempt 1: the provider failed: HTTP 500"),
        std::string("Earlier attempt 2: did not compile"),
        std::string("expected ')' at the end of input"),
        std::string("Earlier attempt 3: passed 3 of 16"), std::string("int wrong()"),
        std::string("broadcast")})
    EXPECT_NE(p.find(want), std::string::npos) << want;
  // No scoring call is shown.
  for (const auto& g : cases.scoring)
    EXPECT_EQ(p.find(crucible::cases::print_call(g.call)), std::string::npos);

  // A template with an unknown placeholder is refused with its file and line.
  const std::string mine = crucible::e2e::temp_dir("prompts");
  for (const char* f : {"kernel_cpp.md", "history.md", "worked_example.cpp"})
    std::filesystem::copy_file(dir + "/" + f, mine + "/" + f);
  std::ofstream(mine + "/kernel_cpp.md") << "OP: {{op}}\nline two {{nonsense}}\n";
  try {
    llm::build_prompt({&op, llm::Language::Cpp, shown, {}}, llm::prompts_dir(mine));
    FAIL() << "an unknown placeholder was accepted";
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_cpp.md:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("{{nonsense}}"), std::string::npos) << e.what();
  }
}

TEST(ExtractCode, TakesTheBlockOfTheLanguageOrSaysWhyNot) {
  std::string why;
  EXPECT_EQ(
      llm::extract_code("Sure.\n```python\nx\n```\n```cpp\nint a;\n```\n", llm::Language::Cpp, why),
      "int a;\n");
  EXPECT_EQ(llm::extract_code("```\nint relu_kernel_impl();\n```", llm::Language::Cpp, why),
            "int relu_kernel_impl();\n");
  EXPECT_EQ(llm::extract_code("```cuda\n__global__ void k() {}\n```", llm::Language::Cuda, why),
            "__global__ void k() {}\n");
  EXPECT_EQ(llm::extract_code("no code here", llm::Language::Cpp, why), "");
  EXPECT_NE(why.find("no fenced code block"), std::string::npos) << why;
  EXPECT_EQ(llm::extract_code("```cpp\nint a;\n", llm::Language::Cpp, why), "");
  EXPECT_NE(why.find("no closing ```"), std::string::npos) << why;
  EXPECT_EQ(llm::extract_code("```python\nimport torch\n```", llm::Language::Cpp, why), "");
  EXPECT_NE(why.find("tags: python"), std::string::npos) << why;
}

TEST(Journal, ACutOffLastLineIsDroppedAndADamagedOneIsNamed) {
  const std::string dir = crucible::e2e::temp_dir("journal");
  {
    llm::Journal j(dir + "/g.jsonl");
    j.append({{"event", "start"}});
    j.append({{"event", "call"}, {"text", "a\nb"}});
  }
  std::ofstream(dir + "/g.jsonl", std::ios::app) << "{\"event\": \"ca";
  const auto events = llm::read_journal(dir + "/g.jsonl");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["text"], "a\nb");
  std::ofstream(dir + "/g.jsonl", std::ios::app) << "\n{\"event\": \"op\"}\n";
  try {
    llm::read_journal(dir + "/g.jsonl");
    FAIL() << "a damaged line was accepted";
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("g.jsonl:3"), std::string::npos) << e.what();
  }
}

TEST(PriceTable, UserPricesOverrideAndBadEntriesAreNamed) {
  llm::PriceTable t;
  ASSERT_NE(t.find("claude-sonnet-4-5"), nullptr);  // a prefix entry
  EXPECT_EQ(t.find("my-local-model"), nullptr);
  const std::string dir = crucible::e2e::temp_dir("prices");
  std::ofstream(dir + "/p.json") << R"({"my-local-model": {"input": 0.5, "output": 1.5}})";
  t.load(dir + "/p.json");
  ASSERT_NE(t.find("my-local-model"), nullptr);
  EXPECT_DOUBLE_EQ(t.find("my-local-model")->output_per_mtok, 1.5);
  std::ofstream(dir + "/bad.json") << R"({"m": {"input": "cheap"}})";
  try {
    t.load(dir + "/bad.json");
    FAIL();
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry \"m\""), std::string::npos) << e.what();
  }
}

}  // namespace
