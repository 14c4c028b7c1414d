// Harness throughput: how many small cases (a few hundred elements) per second crucible
// evaluates through isolated worker processes, end to end (the real binary, process start-up,
// suite parsing and every output file included), side by side with the same cases evaluated
// in-process without isolation.
//
//   bench_harness_throughput [--cases N] [--workers W]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/backends/backend.h"
#include "crucible/cases/trace.h"
#include "crucible/eval/evaluate.h"

using namespace crucible;

namespace {

// Distinct small cases over several op families and dtypes: shapes [a, b] with a*b <= 512.
std::string make_trace(int n) {
  const char* ops[][2] = {{"aten.add.Tensor", "((T([{}, {}], {}), T([{}, {}], {})), {{}})"},
                          {"aten.mul.Tensor", "((T([{}, {}], {}), T([{}, {}], {})), {{}})"},
                          {"aten.relu.default", "((T([{}, {}], {}),), {{}})"},
                          {"aten.exp.default", "((T([{}, {}], {}),), {{}})"},
                          {"aten.sum.dim_IntList", "((T([{}, {}], {}), [1]), {{}})"},
                          {"aten._softmax.default", "((T([{}, {}], {}), -1, False), {{}})"}};
  const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
  std::string text;
  int made = 0;
  for (int a = 1; a <= 64 && made < n; ++a) {
    for (int b = 4; b <= 512 / a && made < n; ++b) {
      for (const auto& op : ops) {
        if (made >= n) break;
        const char* dt = dtypes[(a + b) % 4];
        std::string call =
            std::string(op[0]) == "aten.add.Tensor" || std::string(op[0]) == "aten.mul.Tensor"
                ? fmt::format(fmt::runtime(op[1]), a, b, dt, a, b, dt)
                : fmt::format(fmt::runtime(op[1]), a, b, dt);
        text += fmt::format("Operator: {}\ncnt: 1, {}\n", op[0], call);
        ++made;
      }
    }
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 20000, workers = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--cases") n = std::atoi(argv[i + 1]);
    if (k == "--workers") workers = std::atoi(argv[i + 1]);
  }
  auto dir = std::filesystem::temp_directory_path() / fmt::format("crucible-bench-{}", getpid());
  std::filesystem::create_directories(dir);
  std::string trace = (dir / "small.txt").string();
  std::ofstream(trace) << make_trace(n);

  // 1. Isolated: the real binary, workers and all.
  std::string cmd =
      fmt::format("{} run --suite traces:{} --backend ref --workers {} --quiet --out {}",
                  CRUCIBLE_BINARY, trace, workers, (dir / "run").string());
  auto t0 = std::chrono::steady_clock::now();
  int st = std::system(cmd.c_str());
  double isolated_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream sf(dir / "run" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(sf);
  int cases = s["cases_total"].get<int>();
  int passed = s["cases_passed"].get<int>();

  // 2. In-process, one thread, no isolation: the same cases through evaluate_case.
  auto entries = cases::read_traces(trace);
  auto ref = BackendRegistry::instance().create("ref");
  auto cand = BackendRegistry::instance().create("ref");
  auto t1 = std::chrono::steady_clock::now();
  int inproc_passed = 0;
  for (const auto& e : entries) {
    Case c;
    c.op = e.op;
    c.call = e.call;
    const OpDef& op = OpRegistry::catalog().get(e.op);
    inproc_passed += evaluate_case(c, op, *ref, *cand).status == Status::Passed;
  }
  double inproc_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

  fmt::print("harness throughput, {} small cases (<= 512 elements), {} workers, exit status {}\n",
             cases, workers, WEXITSTATUS(st));
  fmt::print("  isolated workers (end to end) : {:9.0f} cases/s  ({:.2f} s, {} passed)\n",
             cases / isolated_s, isolated_s, passed);
  fmt::print("  in-process, 1 thread          : {:9.0f} cases/s  ({:.2f} s, {} passed)\n",
             entries.size() / inproc_s, inproc_s, inproc_passed);
  fmt::print("  ratio isolated / in-process   : {:9.2f}x\n",
             (cases / isolated_s) / (entries.size() / inproc_s));
  std::filesystem::remove_all(dir);
  return passed == cases ? 0 : 1;
}
