// Reading the micro-benchmark's YAML (yaml-cpp): every key checked against the schema, every
// value's type checked, errors at the node's mark (file:line:col, 1-based).
#include "crucible/quant/bench_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible::quant {
namespace {

struct Reader {
  std::string file;

  std::string at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return file;
    return fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
    input_error(at(n), msg);
  }
  void keys(const YAML::Node& map, const std::set<std::string>& allowed,
            const std::string& what) const {
    if (!map.IsMap()) fail(map, what + " must be a mapping");
    for (const auto& kv : map) {
      const std::string k = kv.first.as<std::string>();
      if (!allowed.count(k)) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(kv.first, "unknown key '" + k + "' in " + what + "; the keys are: " + list);
      }
    }
  }
  std::string str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, "'" + key + "' must be a string");
    return n.Scalar();
  }
  int64_t integer(const YAML::Node& n, const std::string& key, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v))
      fail(n, "'" + key + "' must be an integer, got '" + (n.IsScalar() ? n.Scalar() : "?") + "'");
    if (v < lo || v > hi) fail(n, fmt::format("'{}' must be in [{}, {}], got {}", key, lo, hi, v));
    return v;
  }
  bool boolean(const YAML::Node& n, const std::string& key) const {
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
      fail(n, "'" + key + "' must be true or false");
    return v;
  }
  const YAML::Node seq(const YAML::Node& n, const std::string& key) const {
    if (!n.IsSequence()) fail(n, "'" + key + "' must be a list");
    return n;
  }
};

constexpr int64_t kMaxDim = int64_t{1} << 20;

struct Preset {
  const char* name;
  std::vector<std::pair<const char*, std::pair<int64_t, int64_t>>> layers;  // (k, n)
  std::vector<int64_t> default_m;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"llama",
       {{"attn.wqkv", {8192, 1280}},
        {"attn.w0", {1024, 8192}},
        {"ffn.w13", {8192, 7168}},
        {"ffn.w2", {3584, 8192}}},
       {16384}},
      {"llama3_8b",
       {{"attn.wqkv", {4096, 6144}},
        {"attn.wo", {4096, 4096}},
        {"ffn.w13", {4096, 28672}},
        {"ffn.w2", {14336, 4096}}},
       {1, 16, 512}},
      {"llama3_70b",
       {{"attn.wqkv", {8192, 10240}},
        {"attn.wo", {8192, 8192}},
        {"ffn.w13", {8192, 57344}},
        {"ffn.w2", {28672, 8192}}},
       {1, 16, 512}},
      {"mistral_7b",
       {{"attn.wqkv", {4096, 6144}},
        {"attn.wo", {4096, 4096}},
        {"ffn.w13", {4096, 28672}},
        {"ffn.w2", {14336, 4096}}},
       {1, 16, 512}},
  };
  return p;
}

std::vector<MatrixShape> shapes_of(const Reader& r, const YAML::Node& spec) {
  if (!spec.IsMap() || !spec["name"]) r.fail(spec, "a matrix_shapes entry needs a 'name'");
  const std::string name = r.str(spec["name"], "name");
  std::vector<MatrixShape> out;
  if (name == "custom") {
    r.keys(spec, {"name", "shapes"}, "matrix_shapes 'custom'");
    if (!spec["shapes"]) r.fail(spec, "matrix_shapes 'custom' needs 'shapes: [[m, k, n], ...]'");
    for (const YAML::Node& s : r.seq(spec["shapes"], "shapes")) {
      if (!s.IsSequence() || s.size() != 3)
        r.fail(s, "a shape is a list of three positive integers [m, k, n]");
      out.push_back({r.integer(s[0], "m", 1, kMaxDim), r.integer(s[1], "k", 1, kMaxDim),
                     r.integer(s[2], "n", 1, kMaxDim), "custom"});
    }
    if (out.empty()) r.fail(spec["shapes"], "'shapes' is empty: give at least one [m, k, n]");
    return out;
  }
  const bool pow =
      name == "pow2" || name == "pow2_extended" || name == "small_sweep" || name == "sweep";
  if (pow) {
    r.keys(spec, {"name", "min_power", "max_power"}, "matrix_shapes '" + name + "'");
    const int64_t dmin = name == "sweep" ? 8 : 10,
                  dmax = name == "pow2" || name == "pow2_extended" ? 14 : 15;
    const int64_t lo = spec["min_power"] ? r.integer(spec["min_power"], "min_power", 0, 20) : dmin;
    const int64_t hi = spec["max_power"] ? r.integer(spec["max_power"], "max_power", 0, 20) : dmax;
    if (lo > hi) r.fail(spec, fmt::format("min_power ({}) is above max_power ({})", lo, hi));
    for (int64_t i = lo; i <= hi; ++i) {
      const int64_t a = int64_t{1} << i;
      if (name == "pow2" || name == "pow2_extended") {
        out.push_back({a, a, a, name});
        if (name == "pow2_extended" && i > 0)
          out.push_back({a + a / 2, a + a / 2, a + a / 2, name});
      } else if (name == "small_sweep") {
        for (int64_t j = i; j <= hi; ++j)
          out.push_back({a, int64_t{1} << j, int64_t{1} << j, name});
      } else {
        for (int64_t j = lo; j <= hi; ++j)
          for (int64_t k = lo; k <= hi; ++k)
            out.push_back({a, int64_t{1} << j, int64_t{1} << k, name});
      }
    }
    return out;
  }
  for (const Preset& p : presets()) {
    if (name != p.name) continue;
    r.keys(spec, {"name", "m_values"}, "matrix_shapes '" + name + "'");
    std::vector<int64_t> ms = p.default_m;
    if (spec["m_values"]) {
      ms.clear();
      for (const YAML::Node& m : r.seq(spec["m_values"], "m_values"))
        ms.push_back(r.integer(m, "m_values", 1, kMaxDim));
      if (ms.empty()) r.fail(spec["m_values"], "'m_values' is empty");
    }
    for (int64_t m : ms)
      for (const auto& [layer, kn] : p.layers)
        out.push_back({m, kn.first, kn.second, std::string(name) + " " + layer});
    return out;
  }
  std::string known = "custom, pow2, pow2_extended, small_sweep, sweep";
  for (const Preset& p : presets()) known += std::string(", ") + p.name;
  r.fail(spec["name"],
         "unknown matrix_shapes generator '" + name + "'; the generators are: " + known);
}

DType dtype_of(const Reader& r, const YAML::Node& n) {
  const std::string s = r.str(n, "high_precision_dtype");
  // torch.float32, float32 (TorchAO's configs write both) or crucible's code f32.
  std::optional<DType> t = parse_dtype(s);
  if (!t) t = parse_dtype("torch." + s);
  if (t && (*t == DType::Float32 || *t == DType::BFloat16 || *t == DType::Float16)) return *t;
  r.fail(n, "high_precision_dtype must be torch.float32, torch.bfloat16 or torch.float16, got '" +
                s + "'");
}

// The group sizes of the recipes must divide every shape's k (and int4's n by 16).
void check_groups(const Reader& r, const YAML::Node& at, const std::vector<Recipe>& recipes,
                  const ModelParams& mp) {
  for (const Recipe& rc : recipes) {
    if (rc.group == 0) continue;
    for (const MatrixShape& s : mp.shapes) {
      if (s.k % rc.group != 0)
        r.fail(at, fmt::format("recipe {} cannot quantize shape (m={}, k={}, n={}) of model_params "
                               "'{}': k is not a multiple of the group size {}; use a group size "
                               "that divides {} or drop the shape",
                               rc.name, s.m, s.k, s.n, mp.name, rc.group, s.k));
      if (rc.kind == RecipeKind::Int4WeightOnly && s.n % 16 != 0)
        r.fail(at, fmt::format("recipe {} cannot quantize shape (m={}, k={}, n={}) of model_params "
                               "'{}': ATen's int4 CPU packing needs n to be a multiple of 16",
                               rc.name, s.m, s.k, s.n, mp.name));
    }
  }
}

}  // namespace

const std::vector<std::string>& bench_activations() {
  static const std::vector<std::string> a = {"relu",      "sigmoid", "gelu",     "silu",
                                             "leakyrelu", "relu6",   "hardswish"};
  return a;
}

bool is_model_type(const std::string& t) {
  if (t == "linear" || t == "transformer_block") return true;
  if (!t.starts_with("ln_linear_")) return false;
  const std::string act = t.substr(10);
  for (const std::string& a : bench_activations())
    if (a == act) return true;
  return false;
}

BenchConfig parse_bench_config(const std::string& text, const std::string& file) {
  Reader r{file};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    input_error(fmt::format("{}:{}:{}", file, e.mark.line + 1, e.mark.column + 1), e.msg);
  }
  BenchConfig c;
  c.file = file;
  if (!root.IsMap()) input_error(file, "the config must be a YAML mapping of keys");
  r.keys(root, {"benchmark_mode", "quantization_config_recipe_names", "output_dir", "model_params"},
         "the config");
  if (root["benchmark_mode"] && r.str(root["benchmark_mode"], "benchmark_mode") != "inference")
    r.fail(root["benchmark_mode"], "benchmark_mode must be 'inference' (the only mode)");
  if (root["output_dir"]) c.output_dir = r.str(root["output_dir"], "output_dir");
  if (!root["quantization_config_recipe_names"])
    input_error(file,
                "missing 'quantization_config_recipe_names' (a list of recipes, e.g. [int8wo])");
  for (const YAML::Node& n :
       r.seq(root["quantization_config_recipe_names"], "quantization_config_recipe_names"))
    c.recipes.push_back(parse_recipe(r.str(n, "quantization_config_recipe_names"), r.at(n)));
  if (c.recipes.empty())
    r.fail(root["quantization_config_recipe_names"], "no recipe given: list at least one");
  if (!root["model_params"]) input_error(file, "missing 'model_params' (a list of models)");
  for (const YAML::Node& m : r.seq(root["model_params"], "model_params")) {
    r.keys(m,
           {"name", "matrix_shapes", "high_precision_dtype", "model_type", "device",
            "use_torch_compile", "torch_compile_mode", "enable_profiler", "enable_memory_profiler"},
           "a model_params entry");
    ModelParams mp;
    mp.where = r.at(m);
    mp.name = m["name"] ? r.str(m["name"], "name") : fmt::format("model{}", c.models.size());
    if (!m["matrix_shapes"]) r.fail(m, "a model_params entry needs 'matrix_shapes'");
    for (const YAML::Node& s : r.seq(m["matrix_shapes"], "matrix_shapes")) {
      const std::vector<MatrixShape> v = shapes_of(r, s);
      mp.shapes.insert(mp.shapes.end(), v.begin(), v.end());
    }
    if (m["high_precision_dtype"]) mp.high_precision_dtype = dtype_of(r, m["high_precision_dtype"]);
    if (m["model_type"]) {
      mp.model_type = r.str(m["model_type"], "model_type");
      if (!is_model_type(mp.model_type)) {
        std::string acts;
        for (const std::string& a : bench_activations()) acts += (acts.empty() ? "" : "|") + a;
        r.fail(m["model_type"], "unknown model_type '" + mp.model_type +
                                    "'; the model types are: linear, ln_linear_<" + acts +
                                    ">, transformer_block");
      }
    }
    if (m["device"]) {
      mp.device = r.str(m["device"], "device");
      if (mp.device != "cpu" && mp.device != "cuda")
        r.fail(m["device"], "device '" + mp.device +
                                "' is not one the micro-benchmark runs on; use device: cpu or "
                                "device: cuda (with a backend on CUDA, e.g. --backend aten:cuda)");
    }
    for (const char* k : {"use_torch_compile", "enable_profiler", "enable_memory_profiler"})
      if (m[k]) r.boolean(m[k], k);
    if (m["torch_compile_mode"]) r.str(m["torch_compile_mode"], "torch_compile_mode");
    if (mp.model_type == "transformer_block")
      for (const MatrixShape& s : mp.shapes)
        if (s.k % 64 != 0)
          r.fail(m, fmt::format("transformer_block needs k (the hidden size) to be a multiple of "
                                "64 (heads of 64), got k={}",
                                s.k));
    check_groups(r, m, c.recipes, mp);
    c.models.push_back(std::move(mp));
  }
  if (c.models.empty())
    r.fail(root["model_params"], "model_params is empty: give at least one model");
  return c;
}

BenchConfig read_bench_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) input_error(path, "cannot read the config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_bench_config(ss.str(), path);
}

}  // namespace crucible::quant
