// The zoo's configs and captures (see zoo.h).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "crucible/autograd/autograd.h"
#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/models/zoo.h"
#include "crucible/ops/op.h"

namespace crucible::models {

namespace fs = std::filesystem;

graph::Initializer ZooModel::input_init(const std::string&, DType dtype) const {
  graph::Initializer init;
  if (!is_floating(dtype))
    usage_error(class_name() + ": an integer input needs the model to say its values");
  init.kind = graph::Initializer::Kind::Normal;
  init.args = {cases::Literal::integer(0), cases::Literal::integer(1)};
  return init;
}

std::string zoo_dir() {
  if (const char* env = std::getenv("CRUCIBLE_ZOO"); env && *env) return env;
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "src" / "models");
#ifdef CRUCIBLE_SOURCE_DIR
  candidates.push_back(fs::path(CRUCIBLE_SOURCE_DIR) / "src" / "models");
#endif
  for (const fs::path& p : candidates)
    if (fs::is_directory(p, ec)) return fs::weakly_canonical(p, ec).string();
  return "";
}

namespace {

// BackendBench writes a model test's empty positional arguments as a list, "([], {...})"; the
// case grammar's form is a tuple, "((), {...})".
std::string as_case_grammar(const std::string& test) {
  const auto open = test.find_first_not_of(" \t");
  if (open != std::string::npos && test[open] == '(') {
    const auto lb = test.find_first_not_of(" \t", open + 1);
    if (lb != std::string::npos && test[lb] == '[') {
      const auto rb = test.find_first_not_of(" \t", lb + 1);
      if (rb != std::string::npos && test[rb] == ']')
        return test.substr(0, lb) + "()" + test.substr(rb + 1);
    }
  }
  return test;
}

std::vector<std::string> string_list(const Json& j, const std::string& file,
                                     const std::string& key) {
  if (!j.is_array()) input_error(file, key + " is not a list of op names");
  std::vector<std::string> out;
  for (const Json& e : j) {
    if (!e.is_string()) input_error(file, key + " holds a non-string: " + e.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

ModelConfig load_config(const std::string& name, const std::string& dir) {
  std::string root = dir.empty() ? zoo_dir() : dir;
  if (root.empty())
    usage_error("the zoo's configs (src/models) are not found; set CRUCIBLE_ZOO to that folder");
  ModelConfig c;
  c.name = name;
  c.file = (fs::path(root) / name / (name + ".json")).string();
  std::ifstream in(c.file);
  if (!in) input_error(c.file, "cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  // Ordered: the first model test is the one the suite runs.
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(ss.str());
  } catch (const nlohmann::ordered_json::exception& e) {
    input_error(c.file, std::string("is not JSON: ") + e.what());
  }
  if (!j.is_object()) input_error(c.file, "is not a JSON object");
  for (const char* key : {"model_config", "ops", "model_tests", "metadata"})
    if (!j.contains(key)) input_error(c.file, std::string("lacks \"") + key + "\"");
  const auto& mc = j["model_config"];
  if (!mc.is_object() || !mc.contains("init_args") || !mc["init_args"].is_object())
    input_error(c.file, "model_config.init_args is not an object");
  c.init_args = Json::parse(mc["init_args"].dump());
  const auto& ops = j["ops"];
  if (!ops.is_object() || !ops.contains("forward") || !ops.contains("backward"))
    input_error(c.file, "ops needs \"forward\" and \"backward\" lists");
  c.forward_ops = string_list(Json::parse(ops["forward"].dump()), c.file, "ops.forward");
  c.backward_ops = string_list(Json::parse(ops["backward"].dump()), c.file, "ops.backward");
  if (!j["model_tests"].is_object() || j["model_tests"].empty())
    input_error(c.file, "model_tests is not a non-empty object");
  for (const auto& [k, v] : j["model_tests"].items()) {
    if (!v.is_string()) input_error(c.file, "model_tests." + k + " is not a string");
    cases::parse_call(as_case_grammar(v.get<std::string>()),
                      c.file + ": model_tests." + k);  // checks the grammar
    c.tests.emplace_back(k, v.get<std::string>());
  }
  const auto& md = j["metadata"];
  if (!md.is_object() || !md.contains("description") || !md["description"].is_string())
    input_error(c.file, "metadata.description is not a string");
  c.description = md["description"].get<std::string>();
  return c;
}

std::unique_ptr<ZooModel> make_model(const std::string& name, const Json& init_args) {
  std::string names;
  for (const ZooEntry& e : zoo()) {
    if (e.name == name) return e.make(init_args);
    names += (names.empty() ? "" : ", ") + e.name;
  }
  usage_error("no model '" + name + "' in the zoo; it has: " + names);
}

Captured capture(ZooModel& model, const std::string& graph_name, const std::string& test,
                 bool training) {
  const cases::CallSpec call = cases::parse_call(as_case_grammar(test), graph_name + " test");
  model.train(training);
  nn::Tracer t(graph_name, "forward", "crucible zoo: " + model.class_name());
  std::vector<nn::Var> inputs;
  for (const auto& [name, lit] : call.kwargs) {
    if (lit.kind != cases::LitKind::Tensor)
      input_error(graph_name + " test", "input " + name + " is not a tensor T(...)");
    inputs.push_back(t.declare(graph::DeclKind::Input, name, lit.tensor.shape, lit.tensor.dtype,
                               model.input_init(name, lit.tensor.dtype)));
  }
  const nn::Var y = model.forward(t, inputs);
  Captured c;
  if (training) {
    const autograd::TrainingOps ops = autograd::make_training(t, y);
    c.forward_ops = ops.forward;
    c.backward_ops = ops.backward;
  } else {
    t.output(y);
    c.forward_ops = t.graph().ops_used();
  }
  c.graph = t.finish();
  return c;
}

std::vector<std::string> check_config_ops(const ModelConfig& c, const Captured& training) {
  std::vector<std::string> problems;
  auto compare = [&](const std::vector<std::string>& listed, const std::vector<std::string>& used,
                     const std::string& key) {
    const std::set<std::string> l(listed.begin(), listed.end()), u(used.begin(), used.end());
    if (l.size() != listed.size()) problems.push_back(key + " lists an op twice");
    for (const std::string& op : l) {
      if (!OpRegistry::catalog().find(op))
        problems.push_back(key + " lists " + op + ", which is not a catalog op");
      else if (!u.contains(op))
        problems.push_back(key + " lists " + op + ", which the model's " + key.substr(4) +
                           " graph does not use");
    }
    for (const std::string& op : u)
      if (!l.contains(op)) problems.push_back(key + " misses " + op + ", which the model uses");
  };
  compare(c.forward_ops, training.forward_ops, "ops.forward");
  compare(c.backward_ops, training.backward_ops, "ops.backward");
  for (std::string& p : problems) p = c.file + ": " + p;
  return problems;
}

}  // namespace crucible::models
