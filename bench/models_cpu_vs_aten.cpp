// Whole models on `cpu` against `aten`, side by side in one run: each graph executed on both
// backends alternately (the same values, the same seed), after a warm-up run each. Prints per
// model the milliseconds per forward (forward graphs) or per training step (training graphs) of
// each backend, the ratio aten / cpu (above 1: cpu is faster), and the ops where cpu spends
// most of its time, with their share and their own aten / cpu ratio.
//
//   bench_models_cpu_vs_aten [--graphs FILE_OR_DIR] [--filter a,b] [--reps N] [--threads T]
//                            [--top K]
//
// Default graphs: the shipped tiny models (data/models/*-tiny-*.graph). A backend that lacks an
// op of a model says which, and that model is left out.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_util.h"

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"

using namespace crucible;
using crucible::bench::geomean;
using crucible::bench::median;
using crucible::bench::split;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Forwards every call to a backend and adds up the time spent per op.
class TimedBackend final : public Backend {
 public:
  explicit TimedBackend(std::unique_ptr<Backend> b) : b_(std::move(b)) {}
  std::string name() const override { return b_->name(); }
  Device device() const override { return b_->device(); }
  bool has_op(const OpDef& op) const override { return b_->has_op(op); }
  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    return b_->supports(op, args, why);
  }
  Values run(const OpDef& op, const Values& args) override {
    const auto t0 = Clock::now();
    Values out = b_->run(op, args);
    b_->synchronize();
    per_op[op.name] += std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  }
  void manual_seed(uint64_t seed) override { b_->manual_seed(seed); }
  void set_num_threads(int n) override { b_->set_num_threads(n); }
  Tensor allocate(const Shape& s, const Shape& st, DType t) override {
    return b_->allocate(s, st, t);
  }
  Tensor to_device(const Tensor& h) override { return b_->to_device(h); }
  Tensor to_host(const Tensor& t) override { return b_->to_host(t); }
  void synchronize() override { b_->synchronize(); }

  std::map<std::string, double> per_op;

 private:
  std::unique_ptr<Backend> b_;
};

std::vector<std::string> graph_files(const std::string& where, bool tiny_only) {
  if (fs::is_regular_file(where)) return {where};
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(where))
    if (e.is_regular_file() && e.path().extension() == ".graph" &&
        (!tiny_only || e.path().filename().string().find("-tiny-") != std::string::npos))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string where = std::string(CRUCIBLE_SOURCE_DIR) + "/data/models";
  bool tiny_only = true;
  std::vector<std::string> filter;
  int reps = 5, threads = 0, top = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--graphs") {
      where = next();
      tiny_only = false;
    } else if (a == "--filter") {
      filter = split(next());
    } else if (a == "--reps") {
      reps = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--threads") {
      threads = std::atoi(next().c_str());
    } else if (a == "--top") {
      top = std::max(0, std::atoi(next().c_str()));
    } else {
      fmt::print(stderr,
                 "usage: bench_models_cpu_vs_aten [--graphs FILE_OR_DIR] [--filter a,b] "
                 "[--reps N] [--threads T] [--top K]\n");
      return 2;
    }
  }
  try {
    fmt::print("{:<24} {:>9} {:>12} {:>12} {:>11}   top cpu ops (share of cpu time, aten/cpu)\n",
               "model", "kind", "cpu ms", "aten ms", "aten/cpu");
    for (const std::string& file : graph_files(where, tiny_only)) {
      const graph::Graph g = graph::read_graph(file);
      if (!filter.empty() && std::none_of(filter.begin(), filter.end(), [&](const auto& t) {
            return g.name.find(t) != std::string::npos;
          }))
        continue;
      TimedBackend cpu(BackendRegistry::instance().create("cpu"));
      TimedBackend aten(BackendRegistry::instance().create("aten"));
      if (threads > 0) {
        cpu.set_num_threads(threads);
        aten.set_num_threads(threads);
      }
      bool runnable = true;
      for (TimedBackend* b : {&cpu, &aten}) {
        const auto missing = graph::missing_ops(g, *b);
        if (!missing.empty()) {
          fmt::print("{:<24} {:>9}   {} lacks {} op(s): {}\n", g.name, g.kind, b->name(),
                     missing.size(), missing.front());
          runnable = false;
        }
      }
      if (!runnable) continue;
      const graph::ExecOptions exec{.seed = 0};
      graph::execute(g, cpu, exec);  // warm-up (allocators, caches, thread pools)
      graph::execute(g, aten, exec);
      cpu.per_op.clear();
      aten.per_op.clear();
      std::vector<double> cpu_s, aten_s;
      for (int r = 0; r < reps; ++r) {
        for (int turn = 0; turn < 2; ++turn) {
          TimedBackend& b = (turn == r % 2) ? cpu : aten;  // alternate which goes first
          const auto t0 = Clock::now();
          graph::execute(g, b, exec);
          (&b == &cpu ? cpu_s : aten_s)
              .push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
      }
      const double c = median(cpu_s), a = median(aten_s);
      std::vector<std::pair<double, std::string>> ops;
      double total = 0;
      for (const auto& [op, s] : cpu.per_op) {
        ops.emplace_back(s, op);
        total += s;
      }
      std::sort(ops.rbegin(), ops.rend());
      std::string tops;
      for (int k = 0; k < top && k < static_cast<int>(ops.size()); ++k) {
        const auto& [s, op] = ops[static_cast<size_t>(k)];
        const double at = aten.per_op.count(op) ? aten.per_op[op] : 0;
        tops += fmt::format("{}{} {:.0f}% {:.2f}x", k ? ", " : "", op.substr(5), 100 * s / total,
                            s > 0 ? at / s : 0.0);
      }
      fmt::print("{:<24} {:>9} {:>12.3f} {:>12.3f} {:>10.2f}x   {}\n", g.name, g.kind, 1e3 * c,
                 1e3 * a, a / c, tops);
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    fmt::print(stderr, "bench_models_cpu_vs_aten: {}\n", e.what());
    return 2;
  }
  return 0;
}
