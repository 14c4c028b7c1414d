// The floors of libcrucible, declared once: a module may include its own headers and those of
// the modules below it, never those above. A climbing include fails here with the file, the
// line and the two modules.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;

// From the floor up. `kernel` is the headers at the root of include/crucible (the C ABI
// kernel.h, kernel.hpp and the numeric rules they share with core, numeric.h), which stand
// alone; `api` is the typed call API over the backends; `graph` the model graphs run on them;
// `quant` the quantization recipes that rewrite those graphs; `nn` the modules that capture
// graphs, `autograd` their backward, `models` the zoo.
constexpr std::array<std::string_view, 20> kFloors = {
    "kernel",  "core",     "schema", "compare", "results", "cases",    "ops",
    "sandbox", "backends", "api",    "graph",   "nn",      "autograd", "models",
    "quant",   "suites",   "report", "llm",     "eval",    "cli",
};

std::optional<size_t> floor_of(std::string_view module) {
  for (size_t i = 0; i < kFloors.size(); ++i)
    if (kFloors[i] == module) return i;
  return std::nullopt;
}

// The module of a path relative to src/ or include/crucible/ ("ops/view.cpp" -> "ops",
// "kernel.h" -> "kernel").
std::string module_of(const std::string& rel) {
  const auto slash = rel.find('/');
  if (slash == std::string::npos) return "kernel";
  return rel.substr(0, slash);
}

// The module an include names, or "" for a header outside the project (a system header).
std::string included_module(const std::string& path, const fs::path& root) {
  if (path.starts_with("crucible/")) return module_of(path.substr(9));
  if (fs::exists(root / "src" / path)) return module_of(path);
  return "";
}

TEST(Layering, NoIncludeClimbsAFloor) {
  const fs::path root = CRUCIBLE_SOURCE_DIR;
  const std::regex include_re(R"(^\s*#\s*include\s*"([^"]+)\")");
  int files = 0, includes = 0, private_includes = 0;
  for (const auto& [dir, prefix] :
       {std::pair{root / "src", std::string("src/")},
        std::pair{root / "include" / "crucible", std::string("include/crucible/")}}) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".hpp" && ext != ".cpp" && ext != ".c" && ext != ".cu") continue;
      const std::string rel = fs::relative(entry.path(), dir).generic_string();
      const std::string module = module_of(rel);
      const auto own = floor_of(module);
      ASSERT_TRUE(own) << prefix << rel << ": module '" << module
                       << "' has no floor in tests/test_layering.cpp";
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string target = included_module(m[1].str(), root);
        if (target.empty()) continue;
        ++includes;
        const auto theirs = floor_of(target);
        ASSERT_TRUE(theirs) << prefix << rel << ":" << n << ": includes '" << m[1].str()
                            << "' of module '" << target << "', which has no floor";
        EXPECT_LE(*theirs, *own) << prefix << rel << ":" << n << ": module '" << module
                                 << "' includes '" << m[1].str() << "' of module '" << target
                                 << "', a floor above it";
        // A module's private headers (`*_internal.h`) are its own; what another module needs of
        // it is public (the catalog's shared rules: include/crucible/ops/rules/).
        if (m[1].str().ends_with("_internal.h")) {
          ++private_includes;
          EXPECT_EQ(target, module)
              << prefix << rel << ":" << n << ": module '" << module << "' includes '" << m[1].str()
              << "', private to module '" << target << "'";
        }
      }
    }
  }
  EXPECT_GT(files, 200);
  EXPECT_GT(includes, 500);
  EXPECT_GT(private_includes, 20);  // the check above saw them
}

}  // namespace
