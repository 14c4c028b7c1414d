// A run's profile: its phases, its pools' traces, their summary and their Chrome trace JSON.
#include "crucible/eval/run_profile.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace crucible {

using json = nlohmann::json;

double PoolSummary::busy_fraction() const {
  return slots > 0 && wall > 0 ? in_jobs / (slots * wall) : 0;
}

PoolSummary summarize_pool(const PoolTrace& trace) {
  PoolSummary s;
  s.slots = trace.slots;
  s.wall = std::max(0.0, trace.run_end - trace.run_start);
  s.parent_busy = trace.parent_busy_s;
  std::vector<double> start_ups, ends;
  double stop_from = INFINITY, stop_to = -INFINITY;
  for (const PoolSpan& sp : trace.spans) {
    const double d = std::max(0.0, sp.t1 - sp.t0);
    switch (sp.kind) {
      case PoolSpan::Kind::StartUp:
        start_ups.push_back(d);
        s.starting += d;
        break;
      case PoolSpan::Kind::Job:
        ends.push_back(sp.t1);
        s.in_jobs += d;
        break;
      case PoolSpan::Kind::Stop:
        stop_from = std::min(stop_from, sp.t0);
        stop_to = std::max(stop_to, sp.t1);
        break;
    }
  }
  s.starts = static_cast<int>(start_ups.size());
  s.jobs = ends.size();
  if (!start_ups.empty()) {
    std::sort(start_ups.begin(), start_ups.end());
    s.start_up_median = start_ups[start_ups.size() / 2];
    s.start_up_max = start_ups.back();
  }
  if (stop_to >= stop_from) s.stopping = stop_to - stop_from;
  if (!ends.empty()) {
    std::sort(ends.begin(), ends.end());
    s.first_result = std::max(0.0, ends.front() - trace.run_start);
    const size_t tenth = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(ends.size())));
    s.last_tenth = ends.back() - ends[std::max<size_t>(tenth, 1) - 1];
  }
  return s;
}

RunProfile::RunProfile(Clock::time_point origin) : origin_(origin) {}

double RunProfile::now() const {
  return std::chrono::duration<double>(Clock::now() - origin_).count();
}

void RunProfile::begin(const std::string& name) {
  end();
  phases_.push_back(Phase{name, now(), -1, nullptr});
}

void RunProfile::end() {
  if (!phases_.empty() && phases_.back().t1 < 0) phases_.back().t1 = now();
}

PoolTrace* RunProfile::pool_trace() {
  if (phases_.empty() || phases_.back().t1 >= 0) begin("workers");
  Phase& p = phases_.back();
  if (!p.pool) p.pool = std::make_unique<PoolTrace>(origin_);
  return p.pool.get();
}

std::vector<std::string> RunProfile::summary() const {
  std::vector<std::string> lines;
  double total = 0;
  for (const Phase& p : phases_) {
    const double t1 = p.t1 < 0 ? now() : p.t1;  // an open phase ends now
    const double wall = std::max(0.0, t1 - p.t0);
    total = std::max(total, t1);
    std::string line = fmt::format("{}: {:.2f} s", p.name, wall);
    if (p.pool && p.pool->slots > 0) {
      const PoolSummary s = summarize_pool(*p.pool);
      const double slot_s = s.slots * s.wall;
      auto share = [slot_s](double x) { return slot_s > 0 ? 100 * x / slot_s : 0.0; };
      line += fmt::format(
          "; {} worker{} ({} started; start-up median {:.2f} s, max {:.2f} s): in jobs {:.0f}% "
          "of their time, starting {:.0f}%; first result after {:.2f} s, the last tenth of the "
          "jobs {:.2f} s; parent busy {:.0f}%; shutdown {:.2f} s",
          s.slots, s.slots == 1 ? "" : "s", s.starts, s.start_up_median, s.start_up_max,
          100 * s.busy_fraction(), share(s.starting), s.first_result, s.last_tenth,
          s.wall > 0 ? 100 * s.parent_busy / s.wall : 0.0, s.stopping);
    }
    lines.push_back(line);
  }
  lines.push_back(fmt::format("total: {:.2f} s", total));
  return lines;
}

json RunProfile::chrome_trace(
    const std::function<json(const std::string& phase, size_t job)>& describe) const {
  json events = json::array();
  auto us = [](double s) { return std::llround(s * 1e6); };
  auto name_of = [&](int pid, int tid, const std::string& process, const std::string& thread) {
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", "process_name"},
                      {"args", {{"name", process}}}});
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", thread}}}});
  };
  name_of(0, 0, "crucible", "phases");
  int pid = 0;
  for (const Phase& p : phases_) {
    const double t1 = p.t1 < 0 ? now() : p.t1;
    events.push_back({{"ph", "X"},
                      {"pid", 0},
                      {"tid", 0},
                      {"name", p.name},
                      {"ts", us(p.t0)},
                      {"dur", us(std::max(0.0, t1 - p.t0))}});
    if (!p.pool) continue;
    ++pid;
    for (int slot = 0; slot < p.pool->slots; ++slot)
      name_of(pid, slot + 1, p.name + " workers", fmt::format("slot {}", slot));
    for (const PoolSpan& sp : p.pool->spans) {
      json e = {{"ph", "X"},
                {"pid", pid},
                {"tid", sp.slot + 1},
                {"ts", us(sp.t0)},
                {"dur", us(std::max(0.0, sp.t1 - sp.t0))}};
      json args = {{"pid", sp.pid}};
      switch (sp.kind) {
        case PoolSpan::Kind::StartUp:
          e["name"] = "start-up";
          break;
        case PoolSpan::Kind::Stop:
          e["name"] = "shutdown";
          break;
        case PoolSpan::Kind::Job: {
          json d = describe ? describe(p.name, sp.job) : json::object();
          e["name"] = d.contains("name") ? d["name"] : json(fmt::format("job {}", sp.job));
          if (d.contains("args"))
            for (auto& [k, v] : d["args"].items()) args[k] = v;
          args["job"] = sp.job;
          if (sp.failed) args["ended"] = "the worker died or was killed";
          break;
        }
      }
      e["args"] = std::move(args);
      events.push_back(std::move(e));
    }
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace crucible
