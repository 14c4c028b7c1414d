// The opinfo suite in one dtype (see dtype_suite.h).
#include "suites/dtype_suite.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "ops/sample_completion.h"

namespace crucible {

namespace {

constexpr DType kSuiteDTypes[] = {DType::BFloat16, DType::Float16, DType::Float32, DType::Float64};

bool real_floating(DType t) {
  return std::find(std::begin(kSuiteDTypes), std::end(kSuiteDTypes), t) != std::end(kSuiteDTypes);
}

// A complex or fp8 dtype: a value of it has no form in a real floating dtype.
bool foreign(DType t) { return is_complex(t) || (is_floating(t) && !real_floating(t)); }

// What a call holds: its floating tensors' dtypes, whether it names a floating dtype, whether it
// holds a complex or fp8 tensor or dtype.
struct Contents {
  std::set<DType> tensor_floats;
  bool dtype_argument = false;
  bool foreign = false;
};

void scan(const cases::Literal& l, Contents& c) {
  switch (l.kind) {
    case cases::LitKind::Tensor:
      if (foreign(l.tensor.dtype)) c.foreign = true;
      if (real_floating(l.tensor.dtype)) c.tensor_floats.insert(l.tensor.dtype);
      break;
    case cases::LitKind::DType:
      if (foreign(l.dtype)) c.foreign = true;
      if (real_floating(l.dtype)) c.dtype_argument = true;
      break;
    case cases::LitKind::List:
    case cases::LitKind::Tuple:
      for (const cases::Literal& i : l.items) scan(i, c);
      break;
    case cases::LitKind::Dict:
      for (const auto& kv : l.entries) scan(kv.second, c);
      break;
    default:
      break;
  }
}

// A sample's label in dtype `to`: each floating dtype code in it (f16, bf16, f32, f64) becomes
// `to`'s ("transposed f32" -> "transposed bf16"); other words stay.
std::string label_in_dtype(const std::string& label, DType to) {
  std::string out, word;
  auto flush = [&] {
    const std::optional<DType> t = word.empty() ? std::nullopt : parse_dtype(word);
    out += t && real_floating(*t) && word == dtype_code(*t) ? std::string(dtype_code(to)) : word;
    word.clear();
  };
  for (char ch : label) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      word += ch;
    } else {
      flush();
      out += ch;
    }
  }
  flush();
  return out.empty() ? std::string(dtype_code(to)) : out;
}

// Whether `l` is or holds an integer tensor (not bool).
bool holds_integer_tensor(const cases::Literal& l) {
  if (l.kind == cases::LitKind::Tensor) return is_integral(l.tensor.dtype, false);
  for (const cases::Literal& i : l.items)
    if (holds_integer_tensor(i)) return true;
  return false;
}

// Whether the call of `op` mixes floating data with integer data (a type-promotion sample such
// as add(i64, f32) or sum(i32, dtype=f32)): an elementwise or reduction op with an integer tensor
// in an argument that is not an index (ArgRole IndexInto). Elsewhere integer tensors beside
// floating ones are what the op takes (attention's RNG state, int8 weights, zero points).
bool promotes_integers(const OpDef& op, const cases::CallSpec& call) {
  if (!is_elementwise_family(op.family) && !is_reduction_family(op.family)) return false;
  auto data = [&](const std::string& name, const cases::Literal& l) {
    return holds_integer_tensor(l) && op.role_of(name).kind != ArgRole::Kind::IndexInto;
  };
  const auto& params = op.schema.arguments;
  for (size_t i = 0; i < call.args.size(); ++i)
    if (data(i < params.size() ? params[i].name : std::string(), call.args[i])) return true;
  for (const auto& [name, l] : call.kwargs)
    if (data(name, l)) return true;
  return false;
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::string s;
  for (DType t : dtypes) s += (s.empty() ? "" : " ") + std::string(dtype_code(t));
  return s;
}

}  // namespace

std::string suite_dtype_names() {
  std::string s;
  for (DType t : kSuiteDTypes) s += (s.empty() ? "" : ", ") + std::string(dtype_code(t));
  return s;
}

DType suite_dtype(const std::string& suite, const std::string& argument) {
  std::optional<DType> t = parse_dtype(argument);
  if (!t && !argument.starts_with("torch.")) t = parse_dtype("torch." + argument);
  if (!t || !real_floating(*t))
    usage_error(fmt::format(
        "--suite {}:{}: {} is not a dtype an opinfo suite runs in; valid: {} (e.g. --suite "
        "{}:bf16, BackendBench's default suite; --suite {} alone runs every dtype)",
        suite, argument, argument.empty() ? "''" : "'" + argument + "'", suite_dtype_names(), suite,
        suite));
  return *t;
}

std::optional<cases::CallSpec> call_in_dtype(const cases::CallSpec& call, DType to) {
  Contents c;
  for (const cases::Literal& a : call.args) scan(a, c);
  for (const auto& kv : call.kwargs) scan(kv.second, c);
  if (c.foreign || c.tensor_floats.size() > 1) return std::nullopt;
  if (c.tensor_floats.empty() && !c.dtype_argument) return std::nullopt;
  cases::CallSpec out = call;
  retype_floating(out, to);
  return out;
}

std::string samples_in_dtype(const OpDef& op, std::vector<Sample>& samples, DType to) {
  // OpDef::dtypes lists what ATen supports for the op's input; ops without a tensor input
  // (factories) list none, and their dtype arguments decide.
  if (!op.dtypes.empty() && std::find(op.dtypes.begin(), op.dtypes.end(), to) == op.dtypes.end())
    return fmt::format("ATen has no {} kernel for {} (its input's dtypes: {})", dtype_code(to),
                       op.name, dtype_list(op.dtypes));
  std::vector<Sample> kept;
  std::set<std::string> seen;
  for (const Sample& s : samples) {
    std::optional<cases::CallSpec> call = call_in_dtype(s.call, to);
    if (!call || !seen.insert(cases::print_call(*call)).second) continue;
    if (promotes_integers(op, *call)) continue;
    Sample k = s;
    k.call = std::move(*call);
    k.label = label_in_dtype(s.label, to);
    kept.push_back(std::move(k));
  }
  if (kept.empty())
    return fmt::format(
        "none of the opinfo samples of {} has a {} form (none takes a floating tensor or dtype "
        "argument of a single real dtype)",
        op.name, dtype_code(to));
  samples = std::move(kept);
  return "";
}

}  // namespace crucible
