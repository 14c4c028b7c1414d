// Prompts built from what crucible knows about an op: its schema and family, its dtypes, the
// calls it is tested on (a sample of the feedback cases, never the scoring cases), the errors it
// must raise with ATen's messages, the kernel ABI (kernel.hpp, in full) with a worked example, what
// is forbidden, and the history of the earlier attempts with their compile errors or failing
// cases. The text comes from template files a user can edit (data/prompts/, or --prompts <dir>).
#pragma once

#include <string>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible::llm {

// cpp and cuda are generated and compiled; python and triton are refused until crucible
// evaluates Python kernels.
enum class Language { Cpp, Cuda };
// "--language <text>": a Usage error for anything else, saying why for python/triton.
Language parse_language(const std::string& text);
const char* language_name(Language l);     // "cpp", "cuda"
const char* source_extension(Language l);  // ".cpp", ".cu"

// One call the kernel is tested on, as the prompt shows it.
struct PromptCase {
  std::string call;   // "((T([4, 8], f32),), {})"
  std::string label;  // "broadcast", "special values", "error: ..."
  std::string error;  // non-empty: ATen raises this message for the call
};

// An earlier attempt, for the history in the next prompt.
struct PriorAttempt {
  int number = 0;
  std::string source;    // the code it gave ("" when there was none)
  std::string outcome;   // one line: "did not compile", "passed 10 of 16 feedback cases", ...
  std::string feedback;  // the compile errors or the failing cases, as the model should read them
};

struct PromptInput {
  const OpDef* op = nullptr;
  Language language = Language::Cpp;
  std::vector<PromptCase> cases;
  std::vector<PriorAttempt> history;
};

// The folder of the templates: `dir` when given (an Input error unless it holds them), else
// $CRUCIBLE_PROMPTS, else data/prompts next to the program or in the source tree.
std::string prompts_dir(const std::string& dir);

// The prompt for `in` from the templates in `dir` (prompts_dir's). A missing template or an
// unknown {{placeholder}} is an Input error naming the file and line.
std::string build_prompt(const PromptInput& in, const std::string& dir);

// The name a kernel folder looks for first: "relu__default_kernel_impl" for aten.relu.default.
std::string kernel_function_name(const std::string& op_name);

// The code of the answer: the first fenced block of the language (```cpp, ```c++, ```cuda, ```cu,
// or an untagged one holding the kernel's function name); "" with `why` set when there is none.
std::string extract_code(const std::string& answer, Language language, std::string& why);

}  // namespace crucible::llm
