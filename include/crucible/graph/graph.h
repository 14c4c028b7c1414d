// A model graph: a model's computation as a sequence of catalog op calls over named values.
// Declarations (inputs, parameters, buffers, constants) hold values made before anything runs;
// nodes are op calls whose arguments refer to earlier values by name (`%x`); the graph's outputs
// say what it returns. The text format is described in docs/graphs.md (parse.h reads it,
// print.h writes it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/tensor.h"

namespace crucible::graph {

// The version of the format this crucible reads and writes ("crucible-graph 1").
inline constexpr int kFormatVersion = 1;

// A value's shape, strides and dtype; `defined` is false for an optional tensor an op leaves out
// (convolution_backward's grad_input when output_mask says so).
struct TensorSpec {
  Shape shape;
  Shape strides;
  DType dtype = DType::Float32;
  bool defined = true;

  static TensorSpec of(const Tensor& t);  // an undefined tensor gives defined = false
  static TensorSpec from_literal(const cases::TensorLit& t);
  bool contiguous() const { return strides == contiguous_strides(shape); }
  // T([shape], dtype) with stride=(...) when not contiguous (defined specs only).
  cases::TensorLit literal() const;
  // The literal printed, or "None" when undefined.
  std::string str() const;

  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

enum class DeclKind : uint8_t { Input, Param, Buffer, Const };
std::string_view decl_kind_name(DeclKind k);  // "input", "param", "buffer", "const"

// How a declared value is made: `normal(mean, std)`, `uniform(lo, hi)`, `zeros`, `ones`,
// `full(v)`, `arange`, `index(lo, hi)`, `bool`, `data(v0, ...)` or `grad`.
struct Initializer {
  enum class Kind : uint8_t { Normal, Uniform, Zeros, Ones, Full, Arange, Index, Bool, Data, Grad };
  Kind kind = Kind::Normal;
  std::vector<cases::Literal> args;  // as written (numbers keep their spelling)
  bool written = true;  // false: omitted in the file (the dtype's default), and printed so

  // Argument `i` as a number (Int, Float or Bool literal).
  double number(size_t i) const;
  // "normal(0, 0.02)", "zeros"; "" when not written.
  std::string str() const;
};
std::string_view initializer_name(Initializer::Kind k);

struct Declaration {
  DeclKind kind = DeclKind::Input;
  std::string name;       // without '%': a parameter's state-dict name keeps its dots
  cases::TensorLit type;  // as written
  TensorSpec spec;
  Initializer init;
  int line = 0;
};

struct Node {
  std::string op;                     // the catalog overload: "aten.add.Tensor"
  std::vector<std::string> outputs;   // names without '%'; "_" for a return the graph ignores
  cases::CallSpec call;               // the arguments; value references are %name symbols
  std::vector<TensorSpec> out_specs;  // one per output name, from the op's meta function
  int line = 0;
};

struct GraphOutput {
  enum class Kind : uint8_t { Output, Loss, Grad };
  Kind kind = Kind::Output;
  std::string value;  // the value returned, without '%'
  std::string param;  // Grad: the state-dict name of the parameter it is the gradient of
  int line = 0;
};

// Where a value is defined: a declaration, or output `output` of node `node`.
struct ValueDef {
  int decl = -1;
  int node = -1;
  int output = -1;
  int line = 0;
  TensorSpec spec;
};

struct Graph {
  std::string file;                   // where it was read from ("<graph>" for text)
  std::string name;                   // `name`
  std::string kind;                   // `kind`: "forward" or "training"
  std::optional<std::string> source;  // `source "..."`
  std::vector<Declaration> decls;
  std::vector<Node> nodes;
  std::vector<GraphOutput> outputs;
  std::map<std::string, ValueDef, std::less<>> values;  // every named value

  const ValueDef& value(std::string_view name) const;  // an Internal error when unknown
  // The declaration named `name` (without '%'), or nullptr.
  const Declaration* find_decl(std::string_view name) const;
  // The distinct ops of the nodes, sorted.
  std::vector<std::string> ops_used() const;
};

}  // namespace crucible::graph
