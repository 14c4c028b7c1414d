// The schema grammar, as ATen writes it (torch/csrc/jit/frontend/function_schema_parser.cpp):
//
//   schema    := [ns '::'] name ['.' overload] '(' [args] ')' '->' returns
//   args      := arg (',' arg)*          arg := '*' | '...' | type name ['=' default]
//   returns   := '(' [ret (',' ret)*] ')' | ret           ret := '...' | type [name]
//   type      := base [alias] ('?' | '[' [N] ']' [alias])*
//   base      := dotted-name | Container '(' ... ')' | '(' ... ')'   (containers kept as text)
//   alias     := '(' sets ['!'] ['->' sets] ')'               sets := set ('|' set)*
//
// A hand-written scanner over the text: parsing every ATen overload takes a few milliseconds.
#include <string>
#include <string_view>
#include <utility>

#include "crucible/core/error.h"
#include "crucible/schema/schema.h"
#include "schema/default_value.h"

namespace crucible {
namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// Container types whose parenthesised parameters are part of the type, not an alias annotation.
bool is_container_type(std::string_view name) {
  return name == "Dict" || name == "Future" || name == "Tuple" || name == "List" ||
         name == "Optional" || name == "Union" || name == "RRef" || name == "Await";
}

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  Schema parse() {
    Schema s;
    parse_name(s);
    skip_ws();
    expect('(', "'(' after the operator name");
    parse_arguments(s);
    skip_ws();
    if (!consume("->")) fail("'->' after the arguments");
    skip_ws();
    parse_returns(s);
    skip_ws();
    if (p_ != t_.size()) fail("the end of the schema");
    return s;
  }

 private:
  // ---- scanning ----
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r'))
      ++p_;
  }
  bool at(char c) const { return p_ < t_.size() && t_[p_] == c; }
  bool consume(char c) {
    if (!at(c)) return false;
    ++p_;
    return true;
  }
  bool consume(std::string_view s) {
    if (t_.substr(p_, s.size()) != s) return false;
    p_ += s.size();
    return true;
  }
  void expect(char c, const char* what) {
    if (!consume(c)) fail(what);
  }

  // What is at the cursor, for error messages: a word, a character or "the end of the schema".
  std::string got() const {
    if (p_ >= t_.size()) return "the end of the schema";
    size_t end = p_;
    while (end < t_.size() && is_ident_char(t_[end])) ++end;
    if (end == p_) end = p_ + 1;
    return "'" + std::string(t_.substr(p_, end - p_)) + "'";
  }

  [[noreturn]] void fail(const std::string& expected) const { fail_at(p_, expected, got()); }
  [[noreturn]] void fail_at(size_t pos, const std::string& expected, const std::string& g) const {
    input_error("schema", "column " + std::to_string(pos + 1) + ": expected " + expected +
                              ", got " + g + " in: " + std::string(t_));
  }

  std::string_view ident() {
    size_t start = p_;
    if (p_ < t_.size() && is_ident_start(t_[p_])) {
      ++p_;
      while (p_ < t_.size() && is_ident_char(t_[p_])) ++p_;
    }
    return t_.substr(start, p_ - start);
  }

  // Text from '(' to its matching ')', with whitespace normalised to "Dict(str, t)".
  std::string balanced_parens() {
    size_t start = p_;
    int depth = 0;
    std::string out;
    bool space = false;  // whitespace seen since the last character kept
    do {
      if (p_ >= t_.size()) fail_at(start, "a closing ')'", "the end of the schema");
      char c = t_[p_++];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (space && c != ')' && c != ',' && out.back() != '(' && out.back() != ' ') out += ' ';
      space = false;
      out.push_back(c);
      if (c == ',') out.push_back(' ');
    } while (depth > 0);
    return out;
  }

  // ---- name ----
  void parse_name(Schema& s) {
    skip_ws();
    std::string_view first = ident();
    if (first.empty()) fail("an operator name");
    if (consume("::")) {
      s.ns = std::string(first);
      first = ident();
      if (first.empty()) fail("an operator name after '::'");
    }
    s.name = std::string(first);
    if (consume('.')) {
      std::string_view overload = ident();
      if (overload.empty()) fail("an overload name after '.'");
      s.overload = std::string(overload);
    }
  }

  // ---- types ----
  std::vector<std::string> alias_sets() {
    std::vector<std::string> sets;
    do {
      skip_ws();
      if (consume('*')) {
        sets.emplace_back("*");
      } else {
        std::string_view set = ident();
        if (set.empty()) fail("an alias set name or '*'");
        sets.emplace_back(set);
      }
      skip_ws();
    } while (consume('|'));
    return sets;
  }

  AliasInfo parse_alias() {
    expect('(', "'('");
    AliasInfo a;
    a.before_sets = alias_sets();
    if (consume('!')) a.is_write = true;
    skip_ws();
    if (consume("->")) {
      a.after_sets = alias_sets();
      for (const std::string& set : a.after_sets) a.wildcard_after |= set == "*";
    }
    skip_ws();
    expect(')', "')' closing the alias annotation");
    return a;
  }

  // Parses a type and the alias annotation written within it.
  std::pair<SchemaType, std::optional<AliasInfo>> parse_type() {
    SchemaType type;
    std::optional<AliasInfo> alias;
    if (at('(')) {
      type.name = balanced_parens();  // a tuple type
      type.base = BaseType::Other;
    } else {
      size_t start = p_;
      while (true) {
        if (ident().empty()) fail("a type");
        if (!consume('.')) break;
      }
      type.name = std::string(t_.substr(start, p_ - start));
      if (is_container_type(type.name) && at('(')) {
        type.name += balanced_parens();
        type.base = BaseType::Other;
      } else {
        type.base = base_type_from_name(type.name);
      }
    }
    if (at('(')) alias = parse_alias();
    bool optional_pending = false;
    while (true) {
      if (at('?')) {
        if (type.is_list ? type.optional : optional_pending) fail("a single '?'");
        ++p_;
        (type.is_list ? type.optional : optional_pending) = true;
      } else if (at('[')) {
        if (type.is_list) fail("one list suffix (nested lists are not supported)");
        ++p_;
        type.is_list = true;
        type.element_optional = optional_pending;
        optional_pending = false;
        if (!at(']')) type.fixed_size = list_size();
        expect(']', "']'");
        if (alias) alias->on_elements = true;
        if (at('(')) {
          if (alias) fail("one alias annotation");
          alias = parse_alias();
        }
      } else {
        break;
      }
    }
    type.optional |= optional_pending;
    return {std::move(type), std::move(alias)};
  }

  int list_size() {
    size_t start = p_;
    int n = 0;
    while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9' && n < 1'000'000) {
      n = n * 10 + (t_[p_++] - '0');
    }
    if (p_ == start) fail("a list size or ']'");
    return n;
  }

  // ---- arguments ----
  void parse_arguments(Schema& s) {
    skip_ws();
    if (consume(')')) return;
    bool kwarg_only = false;
    while (true) {
      skip_ws();
      if (s.is_vararg) fail("')' after '...' (varargs must come last)");
      if (consume("...")) {
        s.is_vararg = true;
      } else if (consume('*')) {
        if (kwarg_only) fail("an argument (only one '*' is allowed)");
        kwarg_only = true;
      } else {
        s.arguments.push_back(parse_argument(kwarg_only));
      }
      skip_ws();
      if (consume(')')) break;
      expect(',', "',' or ')' after an argument");
    }
  }

  Argument parse_argument(bool kwarg_only) {
    Argument arg;
    arg.kwarg_only = kwarg_only;
    auto [type, alias] = parse_type();
    arg.type = std::move(type);
    arg.alias = std::move(alias);
    skip_ws();
    std::string_view name = ident();
    if (name.empty()) fail("an argument name");
    arg.name = std::string(name);
    skip_ws();
    if (consume('=')) {
      skip_ws();
      std::string_view text = default_text();
      arg.default_text = std::string(text);
      arg.default_value = schema_detail::default_value_for(text, arg.type);
    }
    return arg;
  }

  // A default runs to the next ',' or ')' outside brackets and quotes.
  std::string_view default_text() {
    size_t start = p_;
    std::string open;  // the brackets not closed yet
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '"' || c == '\'') {
        size_t quote = p_++;
        while (p_ < t_.size() && t_[p_] != c) p_ += t_[p_] == '\\' ? 2 : 1;
        if (p_ >= t_.size()) fail_at(quote, "a closing quote", "the end of the schema");
      } else if (c == '[' || c == '(' || c == '{') {
        open.push_back(c == '[' ? ']' : c == '(' ? ')' : '}');
      } else if (c == ']' || c == ')' || c == '}') {
        if (open.empty()) break;
        if (c != open.back()) fail(std::string("a closing '") + open.back() + "' in the default");
        open.pop_back();
      } else if (c == ',' && open.empty()) {
        break;
      }
      ++p_;
    }
    if (!open.empty()) fail(std::string("a closing '") + open.back() + "' in the default");
    size_t end = p_;
    while (end > start && (t_[end - 1] == ' ' || t_[end - 1] == '\t')) --end;
    if (end == start) fail("a default value");
    return t_.substr(start, end - start);
  }

  // ---- returns ----
  void parse_returns(Schema& s) {
    if (consume('(')) {
      skip_ws();
      if (consume(')')) return;
      while (true) {
        skip_ws();
        if (s.is_varret) fail("')' after '...' (it must come last)");
        if (consume("...")) {
          s.is_varret = true;
        } else {
          s.returns.push_back(parse_return(true));
        }
        skip_ws();
        if (consume(')')) return;
        expect(',', "',' or ')' after a return");
      }
    }
    if (consume("...")) {
      s.is_varret = true;
      return;
    }
    s.returns.push_back(parse_return(false));  // "-> Tensor": a name needs parentheses
  }

  Argument parse_return(bool may_have_name) {
    Argument ret;
    auto [type, alias] = parse_type();
    ret.type = std::move(type);
    ret.alias = std::move(alias);
    if (may_have_name) {
      skip_ws();
      ret.name = std::string(ident());
    }
    return ret;
  }

  std::string_view t_;
  size_t p_ = 0;
};

}  // namespace

Schema parse_schema(std::string_view text) { return Parser(text).parse(); }

}  // namespace crucible
