// The conformance runs: crucible's reference (`ref`) against ATen (`--backend aten`) on the opinfo
// suite and on the shipped traces. Every case that does not pass must be listed in
// docs/aten-differences.md (op, cases, the ATen versions and devices the row applies to, both
// results, why crucible keeps its answer) by a row that applies to the libtorch the run used
// (its manifest.json) and its device; any other disagreement fails the test. ctest label `aten`
// (cmake/aten.cmake). scripts/check_aten_differences.py applies the same rules to a results.jsonl.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "crucible/ops/variants.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

// One row of the differences table: an op and the cases it covers.
//   `*`             every case of the op
//   `dtype:f16`     the cases whose first tensor is f16 (several: `dtype:f16,bf16`)
//   `label:<text>`  the cases whose label contains <text>
//   `<case id>`     one case (16 hex digits, as results.jsonl's case_id)
// and the ATen versions and devices it applies to (the **applies to** cell, one or more of):
//   `<version>`        on every device; `<version> cpu`, `<version> cuda` on one
//   version: `all`, `1.13` (that major.minor), `2.x` (every 2.y), `2.4+` (2.4 and later)
struct Difference {
  std::string op;
  std::vector<std::string> selectors;
  std::vector<std::string> scopes;
  std::string reason;
  int line = 0;
};

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {  // skip the leading '|'
    if (line[i] == '|' && line[i - 1] != '\\') {
      cells.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  for (std::string& c : cells) {
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
  }
  return cells;
}

// The backticked words of a cell: "`a`, `b`" -> {a, b}.
std::vector<std::string> ticked(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex word("`([^`]+)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), word); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The rows of every table whose first cell is a backticked `aten.` op name.
std::vector<Difference> read_differences(const std::string& path) {
  std::vector<Difference> out;
  std::istringstream in(read_text(path));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("| `aten.", 0) != 0 && line.rfind("| `quantized_decomposed.", 0) != 0 &&
        line.rfind("| `torchao.", 0) != 0)
      continue;
    auto cells = split_cells(line);
    Difference d;
    d.line = n;
    auto ops = ticked(cells.empty() ? "" : cells[0]);
    if (!ops.empty()) d.op = ops[0];
    if (cells.size() > 1) d.selectors = ticked(cells[1]);
    if (cells.size() > 2) d.scopes = ticked(cells[2]);
    if (!cells.empty()) d.reason = cells.back();
    out.push_back(std::move(d));
  }
  return out;
}

const std::regex kScope(R"((all|(\d+)\.x|(\d+)\.(\d+)(\+?))( (cpu|cuda))?)");

// A libtorch version (major, minor) and the device a run used.
struct Target {
  int major = 0, minor = 0;
  std::string device;  // "cpu" or "cuda"
};

// Whether a scope of the applies-to cell covers the target (false for a malformed scope).
bool covers(const std::string& scope, const Target& t) {
  std::smatch m;
  if (!std::regex_match(scope, m, kScope)) return false;
  if (m[7].matched && m[7].str() != t.device) return false;
  if (m[1].str() == "all") return true;
  if (m[2].matched) return std::stoi(m[2].str()) == t.major;
  const int major = std::stoi(m[3].str()), minor = std::stoi(m[4].str());
  if (m[5].str() == "+") return t.major > major || (t.major == major && t.minor >= minor);
  return t.major == major && t.minor == minor;
}

bool applies(const Difference& d, const Target& t) {
  return std::any_of(d.scopes.begin(), d.scopes.end(),
                     [&](const std::string& s) { return covers(s, t); });
}

bool selects(const std::string& sel, const nlohmann::json& r) {
  if (sel == "*") return true;
  if (sel.rfind("dtype:", 0) == 0) {
    std::string dt = r.value("dtype", "");
    std::string list = "," + sel.substr(6) + ",";
    return !dt.empty() && list.find("," + dt + ",") != std::string::npos;
  }
  if (sel.rfind("label:", 0) == 0)
    return r.value("label", "").find(sel.substr(6)) != std::string::npos;
  return r.value("case_id", "") == sel;
}

// (Used by the conformance tests, which exist only where libtorch was found.)
// A derived in-place or out= overload (include/crucible/ops/variants.h) is its functional op
// written into a destination: the functional op's rows apply to it too, except those naming
// single cases (a derived case has its own id).
// The id of the functional op's case with the same inputs as a derived overload's case (its call
// without the destinations; in place, the same call), or "" for a factory's.
std::string functional_case_id(const nlohmann::json& r, const DerivedVariant& v) {
  if (v.rule == WriteRule::Factory) return "";
  const OpDef* variant = OpRegistry::catalog().find(r.value("op", ""));
  if (!variant) return "";
  Case c;
  c.op = v.functional->name;
  c.seed = r.value("seed", uint64_t{0});
  try {
    c.call = cases::parse_call(r.value("case", ""));
  } catch (const Error&) {
    return "";
  }
  if (!v.inplace)
    std::erase_if(c.call.kwargs, [&](const auto& kw) {
      for (size_t d : v.destinations)
        if (variant->schema.arguments[d].name == kw.first) return true;
      return false;
    });
  return c.id();
}

// A derived in-place or out= overload (include/crucible/ops/variants.h) is its functional op
// written into a destination: the functional op's rows apply to it too, a row naming a case by
// id to the derived case with the same inputs.
[[maybe_unused]] const Difference* listed(const std::vector<Difference>& ds,
                                          const nlohmann::json& r) {
  const std::string op = r.value("op", "");
  const DerivedVariant* v = derived_variant(op);
  const std::string fid = v ? functional_case_id(r, *v) : "";
  static const std::regex case_id("[0-9a-f]{16}");
  for (const Difference& d : ds) {
    const bool own = d.op == op, functional = v && d.op == v->functional->name;
    if (!own && !functional) continue;
    for (const std::string& s : d.selectors) {
      if (own && selects(s, r)) return &d;
      if (functional && (std::regex_match(s, case_id) ? s == fid : selects(s, r))) return &d;
    }
  }
  return nullptr;
}

const std::string kDoc = std::string(CRUCIBLE_SOURCE_DIR) + "/docs/aten-differences.md";

TEST(AtenDifferencesDoc, EveryRowNamesAnOpCasesAndAReason) {
  auto ds = read_differences(kDoc);
  ASSERT_FALSE(ds.empty()) << kDoc << " lists no differences (or could not be read)";
  static const std::regex selector(R"(\*|dtype:[a-z0-9,]+|label:.+|[0-9a-f]{16})");
  for (const Difference& d : ds) {
    EXPECT_TRUE(d.op.rfind("aten.", 0) == 0 || d.op.rfind("quantized_decomposed.", 0) == 0 ||
                d.op.rfind("torchao.", 0) == 0)
        << kDoc << ":" << d.line;
    EXPECT_FALSE(d.selectors.empty()) << kDoc << ":" << d.line << ": no cases named";
    for (const std::string& s : d.selectors)
      EXPECT_TRUE(std::regex_match(s, selector))
          << kDoc << ":" << d.line << ": bad case '" << s << "'";
    EXPECT_GT(d.reason.size(), 20u) << kDoc << ":" << d.line << ": the reason is missing";
    EXPECT_FALSE(d.scopes.empty()) << kDoc << ":" << d.line << ": no ATen version is named";
    for (const std::string& s : d.scopes)
      EXPECT_TRUE(std::regex_match(s, kScope))
          << kDoc << ":" << d.line << ": bad applies-to scope '" << s << "'";
  }
  const Target cpu113{1, 13, "cpu"}, cuda211{2, 11, "cuda"}, cpu24{2, 4, "cpu"};
  EXPECT_TRUE(covers("1.13 cpu", cpu113));
  EXPECT_FALSE(covers("1.13 cpu", cuda211));
  EXPECT_FALSE(covers("1.13", cuda211));
  EXPECT_TRUE(covers("2.11", cuda211));
  EXPECT_FALSE(covers("2.11 cpu", cuda211));
  EXPECT_TRUE(covers("2.x cuda", cuda211));
  EXPECT_FALSE(covers("2.x", cpu113));
  EXPECT_TRUE(covers("2.4+", cuda211));
  EXPECT_TRUE(covers("2.4+ cpu", cpu24));
  EXPECT_FALSE(covers("2.5+", cpu24));
  EXPECT_TRUE(covers("all", cpu113));
  EXPECT_FALSE(covers("2.11 gpu", cuda211));
  EXPECT_FALSE(covers("2.11cpu", cuda211));
  // Both versions the file was measured with have rows of their own.
  int rows113 = 0, rows211 = 0;
  for (const Difference& d : ds) {
    rows113 += applies(d, cpu113);
    rows211 += applies(d, cuda211);
  }
  EXPECT_GT(rows113, 0);
  EXPECT_GT(rows211, 0);
  nlohmann::json fake = {{"op", "aten.copy.default"}, {"dtype", "f32"}, {"case_id", "0"}};
  EXPECT_TRUE(selects("dtype:f16,f32", fake));
  EXPECT_FALSE(selects("dtype:f16,bf16", fake));
  EXPECT_FALSE(selects("0123456789abcdef", fake));
}

// Runs a shell command and returns its exit status and output (stdout and stderr together).
Output run_command(const std::string& cmd) {
  Output o;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

// scripts/check_aten_differences.py checks a GPU machine's results.jsonl without this binary:
// on one record per row of the file (built from the row's first selector) and one no row
// lists, it must find the same cases unexplained as this test's rules, for each version and
// device.
TEST(AtenDifferencesDoc, TheScriptAppliesTheTestsRules) {
  const auto ds = read_differences(kDoc);
  ASSERT_FALSE(ds.empty());
  std::vector<nlohmann::json> records;
  for (const Difference& d : ds) {
    if (d.selectors.empty()) continue;
    const std::string& sel = d.selectors[0];
    nlohmann::json r = {{"record", "case"},
                        {"op", d.op},
                        {"case_id", "0000000000000000"},
                        {"case", ""},
                        {"label", "plain"},
                        {"dtype", "f32"},
                        {"status", "failed"},
                        {"detail", "wrong values"}};
    if (sel.rfind("dtype:", 0) == 0)
      r["dtype"] =
          sel.substr(6, sel.find(',') == std::string::npos ? std::string::npos : sel.find(',') - 6);
    else if (sel.rfind("label:", 0) == 0)
      r["label"] = sel.substr(6);
    else if (sel != "*")
      r["case_id"] = sel;
    records.push_back(r);
  }
  records.push_back({{"record", "case"},
                     {"op", "aten.add.Tensor"},
                     {"case_id", "ffffffffffffffff"},
                     {"case", ""},
                     {"label", "plain"},
                     {"dtype", "u8"},
                     {"status", "failed"},
                     {"detail", "wrong values"}});
  const std::string dir = temp_dir("aten-differences-script");
  const std::string path = dir + "/results.jsonl";
  {
    std::ofstream out(path);
    for (const auto& r : records) out << r.dump() << "\n";
  }
  for (const Target& t : {Target{1, 13, "cpu"}, Target{2, 11, "cpu"}, Target{2, 11, "cuda"}}) {
    std::vector<Difference> applying;
    for (const Difference& d : ds)
      if (applies(d, t)) applying.push_back(d);
    int unexplained = 0;
    for (const auto& r : records) unexplained += listed(applying, r) == nullptr;
    EXPECT_GT(unexplained, 1) << "rows of other versions and devices must not apply";
    EXPECT_LT(unexplained, static_cast<int>(records.size()));
    const Output o = run_command(
        "python3 " +
        shell_quote(std::string(CRUCIBLE_SOURCE_DIR) + "/scripts/check_aten_differences.py") + " " +
        shell_quote(path) + " --show 0 --version " + std::to_string(t.major) + "." +
        std::to_string(t.minor) + " --device " + t.device);
    EXPECT_EQ(o.status, 1) << o.out;
    EXPECT_NE(o.out.find(", " + std::to_string(unexplained) + " unexplained"), std::string::npos)
        << t.major << "." << t.minor << " " << t.device << ": this test finds " << unexplained
        << " unexplained, the script says:\n"
        << o.out;
  }
}

#ifdef CRUCIBLE_HAVE_ATEN

// An unsupported case is no disagreement when libtorch lacks the kernel (dtype coverage) or the
// dtype; anything else unsupported (an argument crucible could not pass) must be listed.
bool libtorch_lacks_it(const nlohmann::json& r) {
  const std::string d = r.value("detail", "");
  // An overload this libtorch does not have (it came later), or has no CPU kernel for.
  if (d.starts_with("libtorch ") && (d.find(" has no aten::") != std::string::npos ||
                                     d.find(" has no CPU kernel for ") != std::string::npos ||
                                     d.find(" has no CUDA kernel for ") != std::string::npos))
    return true;
  return d.find("not implemented for '") != std::string::npos ||
         d.find("Could not run '") != std::string::npos ||
         d.find(" has no dtype ") != std::string::npos;
}

void conformance(const std::string& suite, const std::string& name, const std::string& extra) {
  std::string out = temp_dir("aten-" + name);
  // Fixed threads: one per call, two workers (the CI machine's cores).
  Output o =
      crucible("run --suite " + suite + " " + extra +
               " --backend aten --reference ref --threads 1 --workers 2 --quiet --out " + out);
  ASSERT_TRUE(o.status == 0 || o.status == 1) << o.out;
  auto lines = read_jsonl(out + "/results.jsonl");
  ASSERT_FALSE(lines.empty()) << o.out;
  // The libtorch version and device of the run, from its manifest ("libtorch 1.13.0", "cpu").
  Target target;
  nlohmann::json manifest = nlohmann::json::parse(read_text(out + "/manifest.json"));
  for (const auto& b : manifest.value("backends", nlohmann::json::array())) {
    if (b.value("role", "") != "candidate") continue;
    std::smatch m;
    const std::string version = b.value("version", ""), device = b.value("device", "");
    static const std::regex libtorch(R"(libtorch (\d+)\.(\d+).*)");
    if (std::regex_match(version, m, libtorch)) {
      target.major = std::stoi(m[1].str());
      target.minor = std::stoi(m[2].str());
    }
    target.device = device.substr(0, device.find(':'));
  }
  ASSERT_GT(target.major, 0) << out << "/manifest.json names no libtorch version for the candidate";
  ASSERT_TRUE(target.device == "cpu" || target.device == "cuda") << target.device;
  std::vector<Difference> ds;
  for (Difference& d : read_differences(kDoc))
    if (applies(d, target)) ds.push_back(std::move(d));
  ASSERT_FALSE(ds.empty()) << kDoc << " has no row for libtorch " << target.major << "."
                           << target.minor << " on " << target.device;
  std::set<std::string> ops_run, ops_supported, ops_other_unsupported;
  int passed = 0;
  std::string unlisted;
  int n_unlisted = 0;
  for (const auto& r : lines) {
    if (r.value("record", "") != "case") continue;
    const std::string op = r.value("op", ""), status = r.value("status", "");
    ops_run.insert(op);
    if (status != "unsupported") ops_supported.insert(op);
    if (status == "unsupported" && !libtorch_lacks_it(r)) ops_other_unsupported.insert(op);
    if (status == "passed") ++passed;
    if (status == "passed" || status == "skipped") continue;
    if (status == "unsupported" && libtorch_lacks_it(r)) continue;
    if (listed(ds, r)) continue;
    if (++n_unlisted <= 40)
      unlisted += "\n  " + op + " " + r.value("case_id", "") + " [" + r.value("dtype", "") + ", " +
                  r.value("label", "") + "] " + r.value("case", "") + "\n      " + status + ": " +
                  r.value("detail", "").substr(0, 300);
  }
  EXPECT_GT(passed, 0);
  EXPECT_EQ(n_unlisted, 0) << n_unlisted << " disagreements between ATen (libtorch " << target.major
                           << "." << target.minor << ", " << target.device
                           << ") and ref are not listed in " << kDoc
                           << " (fix ref, or list them with the reason):" << unlisted;
  // Every op libtorch has is supported: an op with no supported case must be listed, unless
  // each of its cases is in a dtype libtorch has no kernel for (the traces' f16 calls of ops
  // that libtorch 1.13 implements for f32 only: coverage of this libtorch, not a difference).
  for (const std::string& op : ops_run) {
    if (ops_supported.count(op)) continue;
    if (!ops_other_unsupported.count(op)) continue;
    bool found = false;
    for (const auto& d : ds)
      if (d.op == op && std::find(d.selectors.begin(), d.selectors.end(), "*") != d.selectors.end())
        found = true;
    EXPECT_TRUE(found) << op << ": no case is supported by the aten backend, and " << kDoc
                       << " does not list the op with `*`";
  }
}

TEST(AtenConformance, Opinfo) {
  ::setenv("OMP_NUM_THREADS", "1", 1);
  conformance("opinfo", "opinfo", "");
}

TEST(AtenConformance, Traces) {
  ::setenv("OMP_NUM_THREADS", "1", 1);
  // The largest calls are skipped (recorded as such): the f64 reference would take minutes on
  // them with two cores, and their kernels are the same as the smaller calls'.
  conformance("traces:" + std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces", "traces",
              "--max-numel 262144 --max-flops 2e8");
}

#endif

}  // namespace
}  // namespace crucible::e2e
