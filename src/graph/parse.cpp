// The graph format's parser: one statement per line, each checked as it is read (the meta layer
// runs on every node), with file:line:column errors. Node arguments and tensor types are parsed
// by the case grammar's parser (cases/literal.h), which reads `%name` references here.
#include "crucible/graph/parse.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "crucible/cases/references.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "graph/node_call.h"

namespace crucible::graph {

namespace {

using cases::Literal;
using cases::LitKind;
using Kind = Initializer::Kind;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// The line without its comment ('#' outside a string) and trailing blanks.
std::string_view strip_comment(std::string_view line) {
  char quote = 0;
  size_t end = line.size();
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#') {
      end = i;
      break;
    }
  }
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) --end;
  return line.substr(0, end);
}

struct Statement {
  int line = 0;
  std::string_view text;
};

bool is_number(const Literal& l) {
  return l.kind == LitKind::Int || l.kind == LitKind::Float || l.kind == LitKind::Bool;
}

bool has_tensor_literal(const Literal& l) {
  if (l.kind == LitKind::Tensor) return true;
  for (const Literal& item : l.items)
    if (has_tensor_literal(item)) return true;
  for (const auto& [k, v] : l.entries)
    if (has_tensor_literal(v)) return true;
  return false;
}

class GraphParser {
 public:
  GraphParser(std::string_view text, std::string file) : file_(std::move(file)) {
    size_t start = 0;
    int number = 1;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      const std::string_view s = strip_comment(text.substr(start, nl - start));
      if (s.find_first_not_of(" \t") != std::string_view::npos) statements_.push_back({number, s});
      start = nl + 1;
      ++number;
    }
    g_.file = file_;
  }

  Graph run() {
    prescan();
    bool header = false;
    for (const Statement& st : statements_) {
      line_no_ = st.line;
      line_ = st.text;
      pos_ = 0;
      skip_ws();
      if (!header) {
        parse_header();
        header = true;
        continue;
      }
      if (peek() == '%') {
        parse_node();
        continue;
      }
      const size_t at = pos_;
      const std::string kw = word();
      if (kw == "input" || kw == "param" || kw == "buffer" || kw == "const") {
        parse_declaration(kw);
      } else if (kw == "output" || kw == "loss" || kw == "grad") {
        parse_output(kw);
      } else if (kw == "name" || kw == "kind" || kw == "source") {
        parse_property(kw, at);
      } else {
        fail(at,
             "expected a declaration (input, param, buffer, const), a node (%x = aten.op(...)), "
             "output, loss, grad, name, kind or source, got " +
                 got(at));
      }
    }
    if (!header) input_error(file_, "empty graph: expected the header 'crucible-graph 1'");
    if (g_.name.empty()) input_error(file_, "the graph has no 'name' line");
    if (g_.kind.empty()) input_error(file_, "the graph has no 'kind' line (forward or training)");
    if (g_.outputs.empty())
      input_error(file_, "the graph returns nothing: no output, loss or grad line");
    return std::move(g_);
  }

 private:
  std::string file_;
  std::vector<Statement> statements_;
  Graph g_;
  std::map<std::string, Tensor, std::less<>> meta_;    // every value defined so far, as meta
  std::map<std::string, int, std::less<>> first_def_;  // where each name is defined (prescan)
  int line_no_ = 0;
  std::string_view line_;
  size_t pos_ = 0;

  // Where every name is first defined, so that a use before it can name both places.
  void prescan() {
    for (const Statement& st : statements_) {
      std::string_view s = st.text;
      const size_t b = s.find_first_not_of(" \t");
      s.remove_prefix(b);
      std::vector<std::string_view> names;
      if (s.starts_with('%')) {
        s = s.substr(0, s.find('='));
        size_t k = 0;
        while ((k = s.find('%', k)) != std::string_view::npos) {
          size_t e = k + 1;
          while (e < s.size() && is_name_char(s[e])) ++e;
          names.push_back(s.substr(k + 1, e - k - 1));
          k = e;
        }
      } else {
        for (std::string_view kw : {"input", "param", "buffer", "const"}) {
          if (!s.starts_with(kw)) continue;
          const size_t k = s.find('%');
          if (k == std::string_view::npos) break;
          size_t e = k + 1;
          while (e < s.size() && is_name_char(s[e])) ++e;
          names.push_back(s.substr(k + 1, e - k - 1));
        }
      }
      for (std::string_view n : names) first_def_.emplace(std::string(n), st.line);
    }
  }

  std::string where(size_t at) const {
    return file_ + ":" + std::to_string(line_no_) + ":" + std::to_string(at + 1);
  }
  [[noreturn]] void fail(size_t at, const std::string& message) const {
    input_error(where(at), message);
  }
  char peek() const { return pos_ < line_.size() ? line_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= line_.size(); }
  void skip_ws() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  std::string got(size_t at) const {
    if (at >= line_.size()) return "end of line";
    size_t e = at;
    while (e < line_.size() && line_[e] != ' ' && line_[e] != '\t' && e - at < 40) ++e;
    return "'" + std::string(line_.substr(at, std::max<size_t>(e - at, 1))) + "'";
  }
  void expect_end(const std::string& after) {
    skip_ws();
    if (!at_end()) fail(pos_, "expected end of line after " + after + ", got " + got(pos_));
  }
  cases::SourceOrigin origin() const {
    return cases::SourceOrigin{file_, line_no_, static_cast<int>(pos_) + 1};
  }
  // A word of [A-Za-z0-9_.-] (keywords, op names, state-dict names).
  std::string word() {
    const size_t at = pos_;
    while (!at_end() && (is_name_char(peek()) || peek() == '-')) ++pos_;
    return std::string(line_.substr(at, pos_ - at));
  }
  // `%name`; returns the name without '%'.
  std::string value_name(const std::string& what) {
    skip_ws();
    if (peek() != '%') fail(pos_, "expected " + what + " (%name), got " + got(pos_));
    ++pos_;
    const size_t at = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    if (pos_ == at)
      fail(pos_, "expected a value name ([A-Za-z0-9_.]+) after '%', got " + got(pos_));
    return std::string(line_.substr(at, pos_ - at));
  }
  // The column of the first `%name` token in the line at or after `from`.
  size_t column_of_ref(const std::string& name, size_t from) const {
    const std::string token = "%" + name;
    size_t k = from;
    while ((k = line_.find(token, k)) != std::string_view::npos) {
      const size_t e = k + token.size();
      if (e >= line_.size() || !is_name_char(line_[e])) return k;
      k = e;
    }
    return from;
  }

  void parse_header() {
    const size_t at = pos_;
    const std::string kw = word();
    if (kw != "crucible-graph") {
      fail(at, "expected the header 'crucible-graph " + std::to_string(kFormatVersion) +
                   "' as the first line, got " + got(at));
    }
    skip_ws();
    const size_t v_at = pos_;
    const std::string v = word();
    if (v != std::to_string(kFormatVersion)) {
      fail(v_at, "graph format version " + (v.empty() ? got(v_at) : "'" + v + "'") +
                     " is not supported: this crucible reads version " +
                     std::to_string(kFormatVersion) + " (crucible-graph " +
                     std::to_string(kFormatVersion) + ")");
    }
    expect_end("the header");
  }

  void parse_property(const std::string& kw, size_t at) {
    skip_ws();
    const size_t v_at = pos_;
    if (kw == "source") {
      if (g_.source) fail(at, "a second 'source' line");
      size_t end = 0;
      const Literal s = cases::parse_literal_prefix(line_.substr(pos_), origin(), false, &end);
      if (s.kind != LitKind::String) fail(v_at, "expected a quoted string after 'source'");
      pos_ += end;
      expect_end("the source string");
      g_.source = s.text;
      return;
    }
    std::string& field = kw == "name" ? g_.name : g_.kind;
    if (!field.empty()) fail(at, "a second '" + kw + "' line");
    while (!at_end() && peek() != ' ' && peek() != '\t') ++pos_;
    field = std::string(line_.substr(v_at, pos_ - v_at));
    if (field.empty()) fail(v_at, "expected a value after '" + kw + "'");
    if (kw == "kind" && field != "forward" && field != "training")
      fail(v_at, "expected kind forward or training, got '" + field + "'");
    expect_end("the " + kw);
  }

  void define(const std::string& name, size_t at, const Tensor& meta, ValueDef def) {
    if (const auto it = g_.values.find(name); it != g_.values.end()) {
      fail(at,
           "%" + name + " is already defined at " + file_ + ":" + std::to_string(it->second.line));
    }
    def.line = line_no_;
    def.spec = TensorSpec::of(meta);
    g_.values.emplace(name, std::move(def));
    meta_.emplace(name, meta);
  }

  // A reference to an earlier value (not `%_`).
  const Tensor& resolve(const std::string& name, size_t at) {
    if (name == "_") fail(at, "%_ names a discarded output; it cannot be used");
    const auto it = meta_.find(name);
    if (it != meta_.end()) return it->second;
    const auto d = first_def_.find(name);
    if (d != first_def_.end()) {
      fail(at, "%" + name + " is used before its definition at " + file_ + ":" +
                   std::to_string(d->second));
    }
    fail(at, "unknown value %" + name + " (never defined)");
  }

  void parse_declaration(const std::string& kw) {
    Declaration d;
    d.kind = kw == "input"    ? DeclKind::Input
             : kw == "param"  ? DeclKind::Param
             : kw == "buffer" ? DeclKind::Buffer
                              : DeclKind::Const;
    d.line = line_no_;
    skip_ws();
    const size_t name_at = pos_;
    d.name = value_name("the declared value's name");
    if (d.name == "_") fail(name_at, "%_ cannot be declared");
    skip_ws();
    if (peek() != ':') fail(pos_, "expected ':' after %" + d.name + ", got " + got(pos_));
    ++pos_;
    skip_ws();
    const size_t type_at = pos_;
    size_t end = 0;
    const Literal type = cases::parse_literal_prefix(line_.substr(pos_), origin(), false, &end);
    if (type.kind != LitKind::Tensor)
      fail(type_at, "expected the value's type T([shape], dtype) after ':'");
    if (type.tensor.fill || type.tensor.device)
      fail(type_at, "a declared type is T([shape], dtype[, stride=(...)]): no device or fill");
    pos_ += end;
    d.type = type.tensor;
    d.spec = TensorSpec::from_literal(d.type);
    skip_ws();
    parse_initializer(d);
    expect_end("the initialiser");
    ValueDef def;
    def.decl = static_cast<int>(g_.decls.size());
    define(d.name, name_at, Tensor::meta_strided(d.spec.shape, d.spec.strides, d.spec.dtype),
           std::move(def));
    g_.decls.push_back(std::move(d));
  }

  void parse_initializer(Declaration& d) {
    const DType t = d.spec.dtype;
    const bool floating = is_floating(t) || is_complex(t);
    const bool boolean = t == DType::Bool;
    Initializer& init = d.init;
    if (at_end()) {
      init.written = false;
      if (floating) {
        init.kind = Kind::Normal;
        init.args = {Literal::integer(0), Literal::integer(1)};
      } else if (boolean) {
        init.kind = Kind::Bool;
      } else {
        fail(pos_, "%" + d.name + " is an integer tensor: give its values with index(lo, hi) or " +
                       "data(v0, ...)");
      }
      return;
    }
    const size_t at = pos_;
    const std::string name = word();
    static const std::map<std::string, Kind, std::less<>> kKinds = {
        {"normal", Kind::Normal}, {"uniform", Kind::Uniform}, {"zeros", Kind::Zeros},
        {"ones", Kind::Ones},     {"full", Kind::Full},       {"arange", Kind::Arange},
        {"index", Kind::Index},   {"bool", Kind::Bool},       {"data", Kind::Data},
        {"grad", Kind::Grad}};
    const auto k = kKinds.find(name);
    if (k == kKinds.end()) {
      fail(at, "unknown initialiser " + (name.empty() ? got(at) : "'" + name + "'") +
                   " (expected normal(mean, std), uniform(lo, hi), zeros, ones, full(v), arange, "
                   "index(lo, hi), bool, data(v0, ...) or grad)");
    }
    init.kind = k->second;
    // The arguments each initialiser takes (-1: numel), and the dtypes it fills.
    int arity = 0;
    switch (init.kind) {
      case Kind::Normal:
      case Kind::Uniform:
      case Kind::Index:
        arity = 2;
        break;
      case Kind::Full:
        arity = 1;
        break;
      case Kind::Data:
        arity = -1;
        break;
      default:
        break;
    }
    const std::string dt(dtype_code(t));
    const bool fits =
        init.kind == Kind::Normal || init.kind == Kind::Uniform || init.kind == Kind::Grad
            ? floating
        : init.kind == Kind::Index  ? !floating && !boolean
        : init.kind == Kind::Bool   ? boolean
        : init.kind == Kind::Arange ? !boolean
                                    : true;
    if (!fits) fail(at, name + " cannot initialise a tensor of dtype " + dt);
    if (init.kind == Kind::Grad && d.kind != DeclKind::Input)
      fail(at, "grad marks an input (the upstream gradient), not a " +
                   std::string(decl_kind_name(d.kind)));
    skip_ws();
    if (arity == 0) {
      if (peek() == '(') fail(pos_, name + " takes no arguments");
      return;
    }
    if (peek() != '(') fail(pos_, "expected '(' after " + name + ", got " + got(pos_));
    const size_t args_at = pos_;
    size_t end = 0;
    Literal args = cases::parse_literal_prefix(line_.substr(pos_), origin(), false, &end);
    pos_ += end;
    if (args.kind == LitKind::Tuple) {
      init.args = std::move(args.items);
    } else {
      init.args.push_back(std::move(args));
    }
    const size_t want =
        arity < 0 ? static_cast<size_t>(numel_of(d.spec.shape)) : static_cast<size_t>(arity);
    if (init.args.size() != want) {
      fail(args_at,
           name + "(...) takes " + std::to_string(want) +
               (arity < 0 ? " values (the elements of " + d.spec.str() + ")" : " argument(s)") +
               ", got " + std::to_string(init.args.size()));
    }
    for (const Literal& a : init.args) {
      const bool ok =
          floating  ? is_number(a)
          : boolean ? a.kind == LitKind::Bool || (a.kind == LitKind::Int && (a.i == 0 || a.i == 1))
                    : a.kind == LitKind::Int;
      if (!ok) {
        fail(args_at, name + "(...) takes " +
                          (floating  ? "numbers"
                           : boolean ? "True/False"
                                     : "integers") +
                          " for a tensor of dtype " + dt + ", got " + cases::print_literal(a));
      }
    }
    if (init.kind == Kind::Index && init.args[0].i >= init.args[1].i)
      fail(args_at, "index(lo, hi) needs lo < hi (integers in [lo, hi))");
    if (init.kind == Kind::Uniform && !(init.number(0) <= init.number(1)))
      fail(args_at, "uniform(lo, hi) needs lo <= hi");
    if (init.kind == Kind::Normal && !(init.number(1) >= 0))
      fail(args_at, "normal(mean, std) needs std >= 0");
  }

  void parse_node() {
    Node n;
    n.line = line_no_;
    std::vector<size_t> name_cols;
    while (true) {
      skip_ws();
      name_cols.push_back(pos_);
      n.outputs.push_back(value_name("an output name"));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '=') break;
      fail(pos_, "expected ',' or '=' after the output name, got " + got(pos_));
    }
    ++pos_;
    skip_ws();
    const size_t op_at = pos_;
    std::string written;
    while (!at_end() && is_name_char(peek())) ++pos_;
    written = std::string(line_.substr(op_at, pos_ - op_at));
    if (written.empty())
      fail(op_at, "expected an op overload (aten.X.Y) after '=', got " + got(op_at));
    if (std::count(written.begin(), written.end(), '.') == 1) written += ".default";
    n.op = cases::normalise_op_name(written);
    const OpDef* op = OpRegistry::catalog().find(n.op);
    if (!op)
      fail(op_at, "unknown op '" + n.op + "': not in crucible's catalog (crucible ops lists it)");
    skip_ws();
    if (peek() != '(') fail(pos_, "expected '(' after " + n.op + ", got " + got(pos_));
    const size_t args_at = pos_;
    size_t end = 0;
    n.call = cases::parse_argument_list(line_.substr(pos_), origin(), &end);
    pos_ += end;
    const std::string node_text =
        "%" + n.outputs[0] + (n.outputs.size() > 1 ? ", ..." : "") + " = " + n.op;
    for (const Literal& a : n.call.args) {
      if (has_tensor_literal(a)) {
        const size_t t = line_.find("T(", args_at);
        fail(t == std::string_view::npos ? args_at : t,
             "a node's tensor arguments are value references (%name), not T(...)");
      }
    }
    for (const auto& kw : n.call.kwargs) {
      if (has_tensor_literal(kw.second)) {
        const size_t t = line_.find("T(", args_at);
        fail(t == std::string_view::npos ? args_at : t,
             "a node's tensor arguments are value references (%name), not T(...)");
      }
    }
    detail::for_each_reference(
        n.call, [&](const std::string& name) { resolve(name, column_of_ref(name, args_at)); });
    std::optional<Literal> annotation;
    size_t annotation_at = 0;
    skip_ws();
    if (line_.substr(pos_).starts_with("->")) {
      pos_ += 2;
      skip_ws();
      annotation_at = pos_;
      annotation = cases::parse_literal_prefix(line_.substr(pos_), origin(), false, &end);
      pos_ += end;
    }
    expect_end(annotation ? "the annotation" : "the arguments");

    std::vector<Tensor> outs;
    try {
      const Values args = detail::bind_node(
          *op, n.call,
          [&](std::string_view name) -> const Tensor& { return meta_.find(name)->second; });
      outs = detail::flatten_returns(op->run_meta(args), n.op);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      fail(op_at, node_text + ": the op's meta function refuses the call: " + e.what());
    }
    if (outs.size() != n.outputs.size()) {
      fail(name_cols[0], n.op + " returns " + std::to_string(outs.size()) + " tensor(s) here; " +
                             std::to_string(n.outputs.size()) + " output name(s) given");
    }
    for (const Tensor& t : outs) n.out_specs.push_back(TensorSpec::of(t));
    if (annotation) check_annotation(*annotation, annotation_at, n);
    const int index = static_cast<int>(g_.nodes.size());
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == "_") continue;
      ValueDef def;
      def.node = index;
      def.output = static_cast<int>(k);
      define(n.outputs[k], name_cols[k], outs[k], std::move(def));
    }
    g_.nodes.push_back(std::move(n));
  }

  void check_annotation(const Literal& a, size_t at, const Node& n) {
    std::vector<const Literal*> items;
    if (a.kind == LitKind::Tuple && n.out_specs.size() != 1) {
      for (const Literal& item : a.items) items.push_back(&item);
    } else {
      items.push_back(&a);
    }
    std::string meta;
    for (size_t k = 0; k < n.out_specs.size(); ++k) meta += (k ? ", " : "") + n.out_specs[k].str();
    if (n.out_specs.size() != 1) meta = "(" + meta + ")";
    bool agree = items.size() == n.out_specs.size();
    for (size_t k = 0; agree && k < items.size(); ++k) {
      const Literal& l = *items[k];
      if (l.kind == LitKind::None) {
        agree = !n.out_specs[k].defined;
      } else if (l.kind == LitKind::Tensor) {
        // Without stride=, an annotation states the shape and dtype only.
        const TensorSpec& m = n.out_specs[k];
        agree = m.defined && l.tensor.shape == m.shape && l.tensor.dtype == m.dtype &&
                (!l.tensor.strides || *l.tensor.strides == m.strides);
      } else {
        fail(at, "expected T([shape], dtype), None or a tuple of them after '->'");
      }
    }
    if (!agree) {
      fail(at, "the annotation -> " + cases::print_literal(a) + " disagrees with " + n.op +
                   "'s meta function: -> " + meta);
    }
  }

  void parse_output(const std::string& kw) {
    GraphOutput o;
    o.kind = kw == "output" ? GraphOutput::Kind::Output
             : kw == "loss" ? GraphOutput::Kind::Loss
                            : GraphOutput::Kind::Grad;
    o.line = line_no_;
    skip_ws();
    const size_t at = pos_;
    o.value = value_name("the value returned");
    resolve(o.value, at);
    if (o.kind == GraphOutput::Kind::Grad) {
      skip_ws();
      const size_t p_at = pos_;
      o.param = word();
      if (o.param.empty())
        fail(p_at, "expected the parameter's state-dict name after the gradient, got " + got(p_at));
      const Declaration* d = g_.find_decl(o.param);
      if (!d || d->kind != DeclKind::Param)
        fail(p_at, "grad names '" + o.param + "', which is not a declared param");
    }
    expect_end("the " + kw);
    g_.outputs.push_back(std::move(o));
  }
};

}  // namespace

Graph parse_graph(std::string_view text, const std::string& file) {
  return GraphParser(text, file).run();
}

Graph read_graph(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, "cannot read the graph file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_graph(ss.str(), path);
}

}  // namespace crucible::graph
