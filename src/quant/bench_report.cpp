// Grid, CSV and OSS benchmark records of the micro-benchmark's rows (one source of numbers:
// each is printed from the same fields with the same rounding).
#include "crucible/quant/bench_report.h"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace crucible::quant {
namespace {

struct Column {
  const char* name;
  std::string (*get)(const BenchRow&);
};

std::string num(double v, int digits) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.{}f}", v, digits);
}

bool ran(const BenchRow& r) { return r.status == "ok" || r.status == "failed"; }

const std::vector<Column>& columns() {
  static const std::vector<Column> c = {
      {"model", [](const BenchRow& r) { return r.model_name; }},
      {"model_type", [](const BenchRow& r) { return r.model_type; }},
      {"shape", [](const BenchRow& r) { return r.shape_label; }},
      {"m", [](const BenchRow& r) { return std::to_string(r.m); }},
      {"k", [](const BenchRow& r) { return std::to_string(r.k); }},
      {"n", [](const BenchRow& r) { return std::to_string(r.n); }},
      {"dtype", [](const BenchRow& r) { return std::string(dtype_code(r.dtype)); }},
      {"recipe", [](const BenchRow& r) { return r.recipe; }},
      {"backend", [](const BenchRow& r) { return r.backend; }},
      {"baseline_ms", [](const BenchRow& r) { return ran(r) ? num(r.baseline_ms, 4) : ""; }},
      {"recipe_ms", [](const BenchRow& r) { return ran(r) ? num(r.recipe_ms, 4) : ""; }},
      {"act_quant_ms", [](const BenchRow& r) { return ran(r) ? num(r.act_quant_ms, 4) : ""; }},
      {"recipe_no_act_ms",
       [](const BenchRow& r) { return ran(r) ? num(r.recipe_no_act_ms, 4) : ""; }},
      {"speedup", [](const BenchRow& r) { return ran(r) ? num(r.speedup, 3) : ""; }},
      {"speedup_no_act", [](const BenchRow& r) { return ran(r) ? num(r.speedup_no_act, 3) : ""; }},
      {"sqnr_db", [](const BenchRow& r) { return ran(r) ? num(r.sqnr_db, 2) : ""; }},
      {"sqnr_f64_db", [](const BenchRow& r) { return ran(r) ? num(r.sqnr_f64_db, 2) : ""; }},
      {"baseline_sqnr_f64_db", [](const BenchRow& r) { return num(r.baseline_sqnr_f64_db, 2); }},
      {"layers", [](const BenchRow& r) { return std::to_string(r.layers); }},
      {"samples", [](const BenchRow& r) { return std::to_string(r.samples); }},
      {"status", [](const BenchRow& r) { return r.status; }},
      {"reason", [](const BenchRow& r) { return r.reason; }},
  };
  return c;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string dtype_word(DType t) {
  switch (t) {
    case DType::BFloat16:
      return "bf16";
    case DType::Float16:
      return "fp16";
    default:
      return "fp32";
  }
}

}  // namespace

std::string bench_grid(const std::vector<BenchRow>& rows) {
  // The grid leaves out the long columns (reason); CSV and JSON have every field.
  const std::vector<std::string> shown = {"model_type", "m",
                                          "k",          "n",
                                          "dtype",      "recipe",
                                          "backend",    "baseline_ms",
                                          "recipe_ms",  "act_quant_ms",
                                          "speedup",    "speedup_no_act",
                                          "sqnr_db",    "sqnr_f64_db",
                                          "status"};
  std::vector<const Column*> cols;
  for (const std::string& s : shown)
    for (const Column& c : columns())
      if (s == c.name) cols.push_back(&c);
  std::vector<size_t> width;
  for (const Column* c : cols) width.push_back(std::string(c->name).size());
  for (const BenchRow& r : rows)
    for (size_t i = 0; i < cols.size(); ++i) width[i] = std::max(width[i], cols[i]->get(r).size());
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += fmt::format("{:<{}}  ", cols[i]->name, width[i]);
  out += "\n";
  for (const BenchRow& r : rows) {
    for (size_t i = 0; i < cols.size(); ++i)
      out += fmt::format("{:<{}}  ", cols[i]->get(r), width[i]);
    out += "\n";
    if (!ran(r) && !r.reason.empty()) out += "    " + r.status + ": " + r.reason + "\n";
  }
  return out;
}

std::string bench_csv(const std::vector<BenchRow>& rows) {
  std::string out;
  for (const Column& c : columns()) out += std::string(out.empty() ? "" : ",") + c.name;
  out += "\n";
  for (const BenchRow& r : rows) {
    std::string line;
    for (const Column& c : columns()) line += (line.empty() ? "" : ",") + csv_field(c.get(r));
    out += line + "\n";
  }
  return out;
}

nlohmann::json oss_records(const std::vector<BenchRow>& rows, const nlohmann::json& runner,
                           const nlohmann::json& dependencies) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    if (!ran(r)) continue;
    const std::string hp = dtype_word(r.dtype);
    const std::vector<std::pair<std::string, double>> metrics = {
        {"baseline time (ms)", r.baseline_ms},
        {"quantized time (ms)", r.recipe_ms},
        {"activation quantization time (ms)", r.act_quant_ms},
        {"speedup(wrt " + hp + ")", r.speedup},
        {"speedup without activation quantization(wrt " + hp + ")", r.speedup_no_act},
        {"sqnr(wrt " + hp + ") (dB)", r.sqnr_db},
        {"sqnr(wrt f64) (dB)", r.sqnr_f64_db},
    };
    for (const auto& [name, value] : metrics) {
      // A metric with no figure (the time without the activation quantization where that
      // measured longer than the whole recipe) has no record: OSS values are numbers.
      if (!std::isfinite(value)) continue;
      nlohmann::json rec;
      rec["benchmark"] = {
          {"name", "crucible quantization micro-benchmark"},
          {"mode", "inference"},
          {"dtype", std::string(dtype_code(r.dtype))},
          {"extra_info", {{"device", r.device}, {"backend", r.backend}, {"recipe", r.recipe}}}};
      rec["model"] = {
          {"name", fmt::format("{}-{}-{}x{}x{}", r.model_name, r.model_type, r.m, r.k, r.n)},
          {"type", "micro-benchmark"},
          {"origins", {"crucible"}},
          {"extra_info",
           {{"model_type", r.model_type},
            {"shape", r.shape_label},
            {"m", r.m},
            {"k", r.k},
            {"n", r.n},
            {"quantization", r.recipe},
            {"layers", r.layers}}}};
      rec["metric"] = {{"name", name},
                       {"benchmark_values",
                        {std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value)}},
                       {"target_value", nullptr},
                       {"extra_info", {{"status", r.status}, {"samples", r.samples}}}};
      rec["runners"] = nlohmann::json::array({runner});
      rec["dependencies"] = dependencies;
      out.push_back(rec);
    }
  }
  return out;
}

bool is_oss_v3_record(const nlohmann::json& r, std::string* why) {
  auto bad = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (!r.is_object()) return bad("a record is an object");
  for (const char* k : {"benchmark", "model", "metric", "dependencies"})
    if (!r.contains(k) || !r[k].is_object()) return bad(std::string(k) + " must be an object");
  if (!r.contains("runners") || !r["runners"].is_array() || r["runners"].empty())
    return bad("runners must be a non-empty array");
  for (const char* k : {"name", "mode", "dtype"})
    if (!r["benchmark"].contains(k) || !r["benchmark"][k].is_string())
      return bad(std::string("benchmark.") + k + " must be a string");
  for (const char* k : {"name", "type"})
    if (!r["model"].contains(k) || !r["model"][k].is_string())
      return bad(std::string("model.") + k + " must be a string");
  if (!r["model"].contains("origins") || !r["model"]["origins"].is_array())
    return bad("model.origins must be an array");
  if (!r["metric"].contains("name") || !r["metric"]["name"].is_string())
    return bad("metric.name must be a string");
  if (!r["metric"].contains("benchmark_values") || !r["metric"]["benchmark_values"].is_array())
    return bad("metric.benchmark_values must be an array");
  for (const nlohmann::json& v : r["metric"]["benchmark_values"])
    if (!v.is_number() && !v.is_null()) return bad("metric.benchmark_values holds numbers");
  for (const nlohmann::json& run : r["runners"])
    if (!run.is_object() || !run.contains("name") || !run.contains("type"))
      return bad("each runner has a name and a type");
  return true;
}

}  // namespace crucible::quant
