// The split of a suite's cases into shards, balanced by estimated cost (see shard.h).
#include "crucible/eval/shard.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/core/rng.h"

namespace crucible {

using nlohmann::json;

namespace {

// The cost model's units, in nanoseconds of one core (rough, but the same on every machine:
// only the ratios between cases matter for the split).
constexpr double kCaseNs = 2e5;             // worker round trip, materialisation, comparison
constexpr double kElementNs = 50;           // per element: fill, reference in f64, compare
constexpr double kFlopNs = 0.2;             // per FLOP of the reference (f64 BLAS, one core)
constexpr double kDecidedNs = 1e3;          // skipped, not in the catalog: decided without running
constexpr double kSuiteJudgedNs = 5e9;      // a whole model graph judged by its suite
constexpr double kTimingFloorNs = 3e8;      // warm-up + 2 x 0.1 s of samples + flushes
constexpr double kTimingCeilingNs = 2.5e9;  // TimingOptions::max_wall_seconds and the warm-up

std::optional<int64_t> whole_number(const std::string& t) {
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string ShardSpec::text() const { return fmt::format("{}/{}", index, count); }

ShardSpec parse_shard(const std::string& text, const std::string& flag) {
  const std::string example = fmt::format("e.g. {} 2/4 runs the second of four shards", flag);
  const size_t slash = text.find('/');
  if (slash == std::string::npos)
    usage_error(fmt::format("{} '{}': expected i/n (this machine's shard i of n), {}", flag, text,
                            example));
  const auto i = whole_number(text.substr(0, slash));
  const auto n = whole_number(text.substr(slash + 1));
  if (!i || !n)
    usage_error(fmt::format("{} '{}': i and n are whole numbers written in digits, {}", flag, text,
                            example));
  if (*n < 1 || *n > kMaxShards)
    usage_error(fmt::format("{} '{}': the number of shards n must be 1 to {}, {}", flag, text,
                            kMaxShards, example));
  if (*i < 1 || *i > *n)
    usage_error(
        fmt::format("{} '{}': the shard i must be 1 to n ({}), {}", flag, text, *n, example));
  return ShardSpec{static_cast<int>(*i), static_cast<int>(*n)};
}

double estimated_case_cost(const SuiteCase& sc, bool perf) {
  if (!sc.skip_reason.empty() || (!sc.op && !sc.evaluate)) return kDecidedNs;
  if (sc.evaluate) return kSuiteJudgedNs;
  const CallSize size = call_size(sc.op, sc.c.call);
  const double work =
      kElementNs * static_cast<double>(size.elements) + kFlopNs * std::max(0.0, size.flops);
  double cost = kCaseNs + work;
  if (perf && sc.c.perf)
    cost += std::clamp(kTimingFloorNs + 14 * work, kTimingFloorNs, kTimingCeilingNs);
  return cost;
}

std::vector<int> partition_by_cost(const std::vector<double>& costs, int n) {
  if (n < 1) internal_error("partition_by_cost: fewer than one bin");
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  // The least loaded bin first; on equal loads the lower index.
  using Load = std::pair<double, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> bins;
  for (int b = 0; b < n; ++b) bins.push({0.0, b});
  std::vector<int> bin_of(costs.size(), 0);
  for (size_t item : order) {
    auto [load, b] = bins.top();
    bins.pop();
    bin_of[item] = b;
    bins.push({load + costs[item], b});
  }
  return bin_of;
}

std::string case_list_fingerprint(const std::vector<std::string>& ids) {
  std::string joined;
  for (const std::string& id : ids) joined += id + "\n";
  return fmt::format("{:016x}", hash64(joined.data(), joined.size(), ids.size()));
}

json shard_info_json(const ShardInfo& s) {
  return {{"index", s.spec.index},
          {"count", s.spec.count},
          {"cases_total", s.cases_total},
          {"fingerprint", s.fingerprint},
          {"cases", s.case_ids.size()},
          {"estimated_cost_s", s.estimated_cost_s},
          {"estimated_total_s", s.estimated_total_s},
          {"case_ids", s.case_ids},
          {"positions", s.positions}};
}

ShardInfo shard_info_from_json(const json& j, const std::string& where) {
  auto bad = [&](const std::string& why) {
    input_error(where, "the manifest's \"shard\" block is damaged: " + why);
  };
  if (!j.is_object()) bad("not an object");
  for (const char* key : {"index", "count", "cases_total"})
    if (!j.contains(key) || !j[key].is_number_integer()) bad(fmt::format("no whole \"{}\"", key));
  if (!j.contains("fingerprint") || !j["fingerprint"].is_string()) bad("no \"fingerprint\"");
  if (!j.contains("case_ids") || !j["case_ids"].is_array() || !j.contains("positions") ||
      !j["positions"].is_array() || j["case_ids"].size() != j["positions"].size())
    bad("\"case_ids\" and \"positions\" are not two lists of one length");
  ShardInfo s;
  s.spec.index = j["index"].get<int>();
  s.spec.count = j["count"].get<int>();
  s.cases_total = j["cases_total"].get<int64_t>();
  if (s.spec.count < 1 || s.spec.index < 1 || s.spec.index > s.spec.count)
    bad(fmt::format("shard {}/{} is not i/n with 1 <= i <= n", s.spec.index, s.spec.count));
  s.fingerprint = j["fingerprint"].get<std::string>();
  if (j.contains("estimated_cost_s") && j["estimated_cost_s"].is_number())
    s.estimated_cost_s = j["estimated_cost_s"].get<double>();
  if (j.contains("estimated_total_s") && j["estimated_total_s"].is_number())
    s.estimated_total_s = j["estimated_total_s"].get<double>();
  for (size_t k = 0; k < j["case_ids"].size(); ++k) {
    const json& id = j["case_ids"][k];
    const json& pos = j["positions"][k];
    if (!id.is_string()) bad(fmt::format("case_ids[{}] is not a string", k));
    if (!pos.is_number_integer() || pos.get<int64_t>() < 0 || pos.get<int64_t>() >= s.cases_total)
      bad(fmt::format("positions[{}] is not a place among the suite's {} cases", k, s.cases_total));
    s.case_ids.push_back(id.get<std::string>());
    s.positions.push_back(pos.get<int64_t>());
  }
  return s;
}

ShardInfo select_shard(std::vector<SuiteCase>& cases, ShardSpec spec, bool perf) {
  // The distinct cases, in order of first occurrence.
  std::vector<std::string> ids;
  std::vector<double> costs;
  std::map<std::string, size_t> place;
  for (const SuiteCase& sc : cases) {
    std::string id = sc.c.id();
    if (place.emplace(id, ids.size()).second) {
      ids.push_back(std::move(id));
      costs.push_back(estimated_case_cost(sc, perf));
    }
  }
  const std::vector<int> bin = partition_by_cost(costs, spec.count);

  ShardInfo info;
  info.spec = spec;
  info.cases_total = static_cast<int64_t>(ids.size());
  info.fingerprint = case_list_fingerprint(ids);
  for (size_t k = 0; k < ids.size(); ++k) {
    info.estimated_total_s += costs[k] * 1e-9;
    if (bin[k] != spec.index - 1) continue;
    info.estimated_cost_s += costs[k] * 1e-9;
    info.case_ids.push_back(ids[k]);
    info.positions.push_back(static_cast<int64_t>(k));
  }
  std::vector<SuiteCase> kept;
  for (SuiteCase& sc : cases)
    if (bin[place.at(sc.c.id())] == spec.index - 1) kept.push_back(std::move(sc));
  cases = std::move(kept);
  return info;
}

}  // namespace crucible
