// The prompt of an attempt: the templates of data/prompts/ filled with what the catalog knows
// about the op, the cases it is tested on and the history of earlier attempts.
#include "crucible/llm/prompt.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "backends/dir/kernel_compiler.h"
#include "backends/dir/kernel_folder.h"
#include "crucible/core/error.h"

namespace crucible::llm {

namespace fs = std::filesystem;

Language parse_language(const std::string& text) {
  if (text == "cpp" || text == "c++") return Language::Cpp;
  if (text == "cuda") return Language::Cuda;
  if (text == "python" || text == "triton")
    usage_error(fmt::format(
        "--language {}: crucible does not evaluate Python kernels yet (kernel folders hold C++ "
        "and CUDA sources); use --language cpp or --language cuda",
        text));
  usage_error(fmt::format("--language {}: unknown language; use cpp or cuda", text));
}

const char* language_name(Language l) { return l == Language::Cpp ? "cpp" : "cuda"; }
const char* source_extension(Language l) { return l == Language::Cpp ? ".cpp" : ".cu"; }

std::string kernel_function_name(const std::string& op_name) {
  return dir::kernel_impl_symbols(op_name).front();
}

namespace {

std::string program_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return fs::path(buf).parent_path().string();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) input_error(path, "cannot read the file");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool holds_templates(const fs::path& d) {
  std::error_code ec;
  return fs::is_regular_file(d / "kernel_cpp.md", ec);
}

// Replaces every {{name}} of `text` (read from `file`) by its value.
std::string fill(const std::string& text, const std::string& file,
                 const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + open, '\n'));
    if (close == std::string::npos)
      input_error(fmt::format("{}:{}", file, line), "'{{' without a closing '}}'");
    const std::string name = text.substr(open + 2, close - open - 2);
    auto it = values.find(name);
    if (it == values.end()) {
      std::string known;
      for (const auto& [k, v] : values) known += (known.empty() ? "" : ", ") + k;
      input_error(fmt::format("{}:{}", file, line),
                  fmt::format("unknown placeholder {{{{{}}}}}; known: {}", name, known));
    }
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

std::string dtype_list(const OpDef& op) {
  std::string s;
  for (DType d : op.dtypes) s += (s.empty() ? "" : ", ") + std::string(dtype_code(d));
  return s;
}

// What the catalog knows about the op's behaviour, beyond its schema.
std::string semantics(const OpDef& op) {
  std::vector<std::string> notes;
  notes.push_back(fmt::format("Family: {}.", op.family));
  const std::string& fam = op.family;
  if (fam.starts_with("pointwise"))
    notes.push_back(
        "Pointwise: tensor arguments broadcast against each other (NumPy rules, as "
        "ck::broadcast_shapes does) and the result dtype follows ATen's type promotion "
        "(ck::result_type; a Python number is weaker than any tensor, a 0-d tensor weaker than a "
        "dimensioned one). crucible allocates the output with the broadcast shape and the "
        "promoted dtype.");
  if (op.schema.name.ends_with("_") || op.schema.overload.find("out") != std::string::npos)
    notes.push_back(
        "This op writes into an argument it mutates (in place or out=): write that argument's "
        "elements through its own strides, and nothing outside them.");
  if (op.data_dependent)
    notes.push_back(
        "Some output shapes depend on the values: the output arrives with data == NULL; call "
        "k.alloc_output(...) once the size is known.");
  if (op.value_checks)
    notes.push_back(
        "Some invalid values (an index out of range, a negative count) must make the kernel "
        "return k.error(...) as ATen raises.");
  notes.push_back(
      "Special values: NaN, +-inf, -0.0 and subnormals are tested; they must come out as ATen's "
      "CPU kernels give them. Empty tensors (a 0 in the shape) and 0-d tensors are tested.");
  std::string s;
  for (const std::string& n : notes) s += "- " + n + "\n";
  return s;
}

std::string case_lines(const std::vector<PromptCase>& cases, bool errors) {
  std::string s;
  for (const PromptCase& c : cases) {
    if (errors != !c.error.empty()) continue;
    if (errors)
      s += fmt::format("- {}  ({}) must raise: {}\n", c.call, c.label, c.error);
    else
      s += fmt::format("- {}  ({})\n", c.call, c.label);
  }
  return s.empty() ? "(none)\n" : s;
}

std::string history_text(const std::vector<PriorAttempt>& history, Language lang,
                         const std::string& tmpl, const std::string& file) {
  if (history.empty()) return "";
  std::string s;
  for (const PriorAttempt& a : history) {
    // Only the last two attempts carry their code in full; every one carries its outcome.
    const bool recent = &a >= &history.back() - 1;
    std::string code = a.source.empty() ? "(the answer held no code)"
                       : recent ? fmt::format("```{}\n{}\n```", language_name(lang), a.source)
                                : "(code left out; see the later attempts)";
    s += fill(tmpl, file,
              {{"number", std::to_string(a.number)},
               {"outcome", a.outcome},
               {"code", code},
               {"feedback", a.feedback.empty() ? "(none)" : a.feedback}});
  }
  return s;
}

}  // namespace

std::string prompts_dir(const std::string& dir) {
  if (!dir.empty()) {
    if (!holds_templates(dir))
      input_error("--prompts " + dir, "no kernel_cpp.md there; copy data/prompts/ and edit it");
    return dir;
  }
  if (const char* env = std::getenv("CRUCIBLE_PROMPTS"); env && *env) {
    if (!holds_templates(env))
      input_error(std::string("CRUCIBLE_PROMPTS=") + env,
                  "no kernel_cpp.md there; point it at a copy of data/prompts/");
    return env;
  }
  std::vector<fs::path> candidates;
  if (std::string d = program_dir(); !d.empty()) {
    candidates.push_back(fs::path(d) / ".." / "data" / "prompts");
    candidates.push_back(fs::path(d) / ".." / "share" / "crucible" / "prompts");
  }
#ifdef CRUCIBLE_SOURCE_DIR
  candidates.push_back(fs::path(CRUCIBLE_SOURCE_DIR) / "data" / "prompts");
#endif
  for (const fs::path& p : candidates)
    if (holds_templates(p)) return fs::weakly_canonical(p).string();
  input_error("--prompts", "cannot find the prompt templates (data/prompts); give --prompts <dir>");
}

std::string build_prompt(const PromptInput& in, const std::string& dir) {
  const OpDef& op = *in.op;
  const std::string main_file =
      (fs::path(dir) / (in.language == Language::Cpp ? "kernel_cpp.md" : "kernel_cuda.md"))
          .string();
  const std::string history_file = (fs::path(dir) / "history.md").string();
  const std::string example_file = (fs::path(dir) / "worked_example.cpp").string();
  const std::string include_dir = dir::default_compiler_config().include_dir;
  std::string short_name = op.name.starts_with("aten.") ? op.name.substr(5) : op.name;
  std::map<std::string, std::string> values = {
      {"op", op.name},
      {"folder", short_name},
      {"schema", op.schema.str()},
      {"family", op.family},
      {"dtypes", dtype_list(op)},
      {"semantics", semantics(op)},
      {"cases", case_lines(in.cases, false)},
      {"error_cases", case_lines(in.cases, true)},
      {"function_name", kernel_function_name(op.name)},
      {"language", language_name(in.language)},
      {"extension", source_extension(in.language)},
      {"kernel_hpp", read_file(include_dir + "/crucible/kernel.hpp")},
      {"worked_example", read_file(example_file)},
      {"history", in.history.empty() ? std::string()
                                     : history_text(in.history, in.language,
                                                    read_file(history_file), history_file)},
  };
  return fill(read_file(main_file), main_file, values);
}

std::string extract_code(const std::string& answer, Language language, std::string& why) {
  std::vector<std::pair<std::string, std::string>> blocks;  // (tag, code)
  size_t pos = 0;
  while (true) {
    const size_t open = answer.find("```", pos);
    if (open == std::string::npos) break;
    const size_t eol = answer.find('\n', open);
    if (eol == std::string::npos) break;
    std::string tag = answer.substr(open + 3, eol - open - 3);
    tag.erase(tag.find_last_not_of(" \t\r") + 1);
    const size_t close = answer.find("\n```", eol);
    if (close == std::string::npos) {
      why = "the answer's last code block has no closing ``` (cut off at the token limit?)";
      return "";
    }
    blocks.emplace_back(tag, answer.substr(eol + 1, close + 1 - eol - 1));
    pos = answer.find('\n', close + 4);
    if (pos == std::string::npos) break;
  }
  if (blocks.empty()) {
    why = "the answer holds no fenced code block (```" + std::string(language_name(language)) +
          " ... ```)";
    return "";
  }
  const std::vector<std::string> tags =
      language == Language::Cpp ? std::vector<std::string>{"cpp", "c++", "cc", "cxx", "C++"}
                                : std::vector<std::string>{"cuda", "cu", "cpp", "c++"};
  for (const auto& [tag, code] : blocks)
    if (std::find(tags.begin(), tags.end(), tag) != tags.end()) return code;
  for (const auto& [tag, code] : blocks)
    if (tag.empty() && code.find("kernel") != std::string::npos) return code;
  why = fmt::format("the answer's {} code block(s) are not {} (tags: ", blocks.size(),
                    language_name(language));
  for (size_t i = 0; i < blocks.size(); ++i)
    why += (i ? ", " : "") + (blocks[i].first.empty() ? std::string("none") : blocks[i].first);
  why += ")";
  return "";
}

}  // namespace crucible::llm
