// The Jinja subset: lexer (tags and whitespace control), recursive-descent parser into a small
// tree, and a tree-walking renderer. Builtins (filters, tests, methods) live in jinja_builtins.cpp.
#include "lib/chat/jinja.h"

#include <cctype>
#include <map>

#include "lib/chat/jinja_ast.h"
#include "lib/core/status.h"

namespace bw24::chat {

// ---------------------------------------------------------------------------------------------
// Lexing: split the source into text and tags, applying trim_blocks, lstrip_blocks and "-".
// ---------------------------------------------------------------------------------------------
namespace {

struct Piece {
  enum Kind { kText, kExpr, kStmt } kind;
  std::string body;
  int line;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<Piece> lex(const std::string& src) {
  std::vector<Piece> out;
  size_t i = 0;
  int line = 1;
  bool strip_next = false;  // "-%}" / "-}}": strip leading whitespace of the next text
  bool trim_next = false;   // trim_blocks: drop one newline after a block tag
  auto count_lines = [&](size_t a, size_t b) {
    for (size_t k = a; k < b; ++k) line += src[k] == '\n';
  };
  while (i <= src.size()) {
    size_t open = src.find('{', i);
    while (open != std::string::npos && open + 1 < src.size() && src[open + 1] != '{' && src[open + 1] != '%' &&
           src[open + 1] != '#')
      open = src.find('{', open + 1);
    if (open != std::string::npos && open + 1 >= src.size()) open = std::string::npos;
    std::string text = src.substr(i, (open == std::string::npos ? src.size() : open) - i);
    if (trim_next && !text.empty() && text[0] == '\n') text.erase(0, 1);
    else if (trim_next && text.rfind("\r\n", 0) == 0) text.erase(0, 2);
    if (strip_next) {
      size_t k = 0;
      while (k < text.size() && is_space(text[k])) ++k;
      text.erase(0, k);
    }
    trim_next = strip_next = false;
    if (open == std::string::npos) {
      if (!text.empty()) out.push_back({Piece::kText, text, line});
      break;
    }
    char kind = src[open + 1];
    bool minus_left = open + 2 < src.size() && src[open + 2] == '-';
    bool plus_left = open + 2 < src.size() && src[open + 2] == '+';
    if (minus_left) {
      while (!text.empty() && is_space(text.back())) text.pop_back();
    } else if (kind != '{' && !plus_left) {
      // lstrip_blocks: spaces and tabs between a line start and a block tag go away (only when
      // the whole run lies in this text, i.e. no other tag precedes the block tag on its line).
      size_t k = open;
      while (k > i && (src[k - 1] == ' ' || src[k - 1] == '\t')) --k;
      if (k == 0 || (k > i && src[k - 1] == '\n') || (k == i && k > 0 && src[k - 1] == '\n'))
        text.erase(text.size() - std::min(text.size(), open - k));
    }
    if (!text.empty()) out.push_back({Piece::kText, text, line});
    count_lines(i, open);
    // Find the closing delimiter, skipping over string literals inside the tag.
    const char* close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t p = open + 2;
    char quote = 0;
    size_t end = std::string::npos;
    for (; p + 1 < src.size() + 1; ++p) {
      if (p >= src.size()) break;
      char c = src[p];
      if (kind != '#') {
        if (quote) {
          if (c == '\\') { ++p; continue; }
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') { quote = c; continue; }
      }
      if (c == close[0] && p + 1 < src.size() && src[p + 1] == close[1]) { end = p; break; }
    }
    if (end == std::string::npos)
      throw TemplateError(fmt::format("line {}: unclosed '{{{}' tag", line, kind));
    size_t body_start = open + 2 + (minus_left || plus_left ? 1 : 0);
    size_t body_end = end;
    bool minus_right = body_end > body_start && src[body_end - 1] == '-';
    bool plus_right = body_end > body_start && src[body_end - 1] == '+';
    if (minus_right || plus_right) --body_end;
    std::string body = src.substr(body_start, body_end - body_start);
    if (kind == '{') out.push_back({Piece::kExpr, body, line});
    else if (kind == '%') out.push_back({Piece::kStmt, body, line});
    count_lines(open, end + 2);
    strip_next = minus_right;
    trim_next = kind != '{' && !plus_right && !minus_right;
    i = end + 2;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Expression tokens and parser.
// ---------------------------------------------------------------------------------------------
struct Tok {
  enum Kind { kName, kString, kInt, kFloat, kOp, kEnd } kind;
  std::string text;
};

std::vector<Tok> tokenize_expr(const std::string& s, int line) {
  std::vector<Tok> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (is_space(c)) { ++i; continue; }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Tok::kName, s.substr(i, j - i)});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      bool is_float = false;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        is_float = true;
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      std::string num = s.substr(i, j - i);
      num.erase(std::remove(num.begin(), num.end(), '_'), num.end());
      out.push_back({is_float ? Tok::kFloat : Tok::kInt, num});
      i = j;
      continue;
    }
    if (c == '\'' || c == '"') {
      std::string v;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] != '\\' || j + 1 >= s.size()) { v += s[j]; continue; }
        char e = s[++j];
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case '\\': v += '\\'; break;
          case '\'': v += '\''; break;
          case '"': v += '"'; break;
          case '0': v += '\0'; break;
          default: v += '\\'; v += e; break;
        }
      }
      if (j >= s.size()) throw TemplateError(fmt::format("line {}: unterminated string", line));
      out.push_back({Tok::kString, v});
      i = j + 1;
      continue;
    }
    static const char* kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                 "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|"};
    bool matched = false;
    for (const char* op : kOps) {
      size_t n = std::strlen(op);
      if (s.compare(i, n, op) == 0) {
        out.push_back({Tok::kOp, op});
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) throw TemplateError(fmt::format("line {}: unexpected character '{}'", line, c));
  }
  if (out.size() > 4096) throw TemplateError(fmt::format("line {}: expression longer than 4096 tokens", line));
  out.push_back({Tok::kEnd, ""});
  return out;
}

class ExprParser {
 public:
  ExprParser(std::vector<Tok> toks, int line) : t_(std::move(toks)), line_(line) {}

  ExprPtr parse_expr() {
    // Bounded recursion: a template is data, and "((((..." must not exhaust the stack.
    if (++depth_ > kMaxDepth) fail("expression nested too deeply");
    ExprPtr e = ternary();
    --depth_;
    return e;
  }
  bool at_end() const { return t_[p_].kind == Tok::kEnd; }
  bool peek_name(const char* n) const { return t_[p_].kind == Tok::kName && t_[p_].text == n; }
  bool peek_op(const char* o) const { return t_[p_].kind == Tok::kOp && t_[p_].text == o; }
  std::string name() {
    if (t_[p_].kind != Tok::kName) fail("expected a name");
    return t_[p_++].text;
  }
  void expect_op(const char* o) {
    if (!peek_op(o)) fail(fmt::format("expected '{}'", o));
    ++p_;
  }
  bool accept_op(const char* o) {
    if (!peek_op(o)) return false;
    ++p_;
    return true;
  }
  bool accept_name(const char* n) {
    if (!peek_name(n)) return false;
    ++p_;
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw TemplateError(fmt::format("line {}: {} near '{}'", line_, what, t_[p_].text));
  }
  void expect_end() {
    if (!at_end()) fail("unexpected token");
  }

 private:
  ExprPtr make(Expr e) { return std::make_unique<Expr>(std::move(e)); }

  ExprPtr ternary() {
    ExprPtr a = or_expr();
    if (accept_name("if")) {
      Expr e{Expr::kTernary};
      e.kids.push_back(or_expr());  // condition
      e.kids.push_back(std::move(a));
      if (accept_name("else")) e.kids.push_back(ternary());
      return make(std::move(e));
    }
    return a;
  }
  ExprPtr binary(Expr::Kind k, std::string op, ExprPtr a, ExprPtr b) {
    Expr e{k};
    e.name = std::move(op);
    e.kids.push_back(std::move(a));
    e.kids.push_back(std::move(b));
    return make(std::move(e));
  }
  ExprPtr or_expr() {
    ExprPtr a = and_expr();
    while (accept_name("or")) a = binary(Expr::kBinary, "or", std::move(a), and_expr());
    return a;
  }
  ExprPtr and_expr() {
    ExprPtr a = not_expr();
    while (accept_name("and")) a = binary(Expr::kBinary, "and", std::move(a), not_expr());
    return a;
  }
  ExprPtr not_expr() {
    if (accept_name("not")) {
      Expr e{Expr::kUnary};
      e.name = "not";
      e.kids.push_back(not_expr());
      return make(std::move(e));
    }
    return compare();
  }
  ExprPtr compare() {
    ExprPtr a = math1();
    for (;;) {
      static const char* kCmp[] = {"==", "!=", "<=", ">=", "<", ">"};
      bool done = true;
      for (const char* op : kCmp)
        if (accept_op(op)) {
          a = binary(Expr::kBinary, op, std::move(a), math1());
          done = false;
          break;
        }
      if (!done) continue;
      if (accept_name("in")) {
        a = binary(Expr::kBinary, "in", std::move(a), math1());
        continue;
      }
      if (peek_name("not") && t_[p_ + 1].kind == Tok::kName && t_[p_ + 1].text == "in") {
        p_ += 2;
        a = binary(Expr::kBinary, "not in", std::move(a), math1());
        continue;
      }
      if (accept_name("is")) {
        Expr e{Expr::kTest};
        e.negate = accept_name("not");
        e.name = name();
        e.kids.push_back(std::move(a));
        // A test argument: "is divisibleby(3)" or "is equalto x" / "is sameas none".
        if (accept_op("(")) {
          parse_args(e);
        } else if (!at_end() && (t_[p_].kind == Tok::kString || t_[p_].kind == Tok::kInt ||
                                 t_[p_].kind == Tok::kFloat ||
                                 (t_[p_].kind == Tok::kName && !is_keyword(t_[p_].text)))) {
          e.kids.push_back(math1());
        }
        a = make(std::move(e));
        continue;
      }
      return a;
    }
  }
  static bool is_keyword(const std::string& s) {
    return s == "and" || s == "or" || s == "not" || s == "in" || s == "is" || s == "if" || s == "else";
  }
  ExprPtr math1() {
    ExprPtr a = concat();
    for (;;) {
      if (accept_op("+")) a = binary(Expr::kBinary, "+", std::move(a), concat());
      else if (accept_op("-")) a = binary(Expr::kBinary, "-", std::move(a), concat());
      else return a;
    }
  }
  ExprPtr concat() {
    ExprPtr a = math2();
    while (accept_op("~")) a = binary(Expr::kBinary, "~", std::move(a), math2());
    return a;
  }
  ExprPtr math2() {
    ExprPtr a = unary();
    for (;;) {
      if (accept_op("*")) a = binary(Expr::kBinary, "*", std::move(a), unary());
      else if (accept_op("//")) a = binary(Expr::kBinary, "//", std::move(a), unary());
      else if (accept_op("/")) a = binary(Expr::kBinary, "/", std::move(a), unary());
      else if (accept_op("%")) a = binary(Expr::kBinary, "%", std::move(a), unary());
      else return a;
    }
  }
  ExprPtr unary() {
    if (++unary_depth_ > kMaxDepth) fail("expression nested too deeply");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{unary_depth_};
    if (accept_op("-")) {
      Expr e{Expr::kUnary};
      e.name = "-";
      e.kids.push_back(unary());
      return make(std::move(e));
    }
    if (accept_op("+")) return unary();
    return postfix(primary());
  }
  void parse_args(Expr& e) {  // after "(": positional and keyword arguments up to ")"
    if (accept_op(")")) return;
    for (;;) {
      if (t_[p_].kind == Tok::kName && t_[p_ + 1].kind == Tok::kOp && t_[p_ + 1].text == "=") {
        std::string k = t_[p_].text;
        p_ += 2;
        e.kwargs.emplace_back(k, parse_expr());
      } else {
        e.kids.push_back(parse_expr());
      }
      if (accept_op(")")) return;
      expect_op(",");
    }
  }
  ExprPtr primary() {
    const Tok& t = t_[p_];
    if (t.kind == Tok::kString) {
      std::string s;
      while (t_[p_].kind == Tok::kString) s += t_[p_++].text;  // adjacent literals concatenate
      Expr e{Expr::kLiteral};
      e.value = Value::str(s);
      return make(std::move(e));
    }
    if (t.kind == Tok::kInt || t.kind == Tok::kFloat) {
      ++p_;
      Expr e{Expr::kLiteral};
      e.value = t.kind == Tok::kInt ? Value::data(Json(std::stoll(t.text))) : Value::data(Json(std::stod(t.text)));
      return make(std::move(e));
    }
    if (t.kind == Tok::kName) {
      ++p_;
      Expr e{Expr::kLiteral};
      if (t.text == "true" || t.text == "True") e.value = Value::data(true);
      else if (t.text == "false" || t.text == "False") e.value = Value::data(false);
      else if (t.text == "none" || t.text == "None") e.value = Value::none();
      else {
        e.kind = Expr::kName;
        e.name = t.text;
      }
      return make(std::move(e));
    }
    if (accept_op("(")) {
      ExprPtr inner = parse_expr();
      if (accept_op(",")) {  // a tuple: treated as a list
        Expr e{Expr::kList};
        e.kids.push_back(std::move(inner));
        while (!accept_op(")")) {
          e.kids.push_back(parse_expr());
          if (!peek_op(")")) expect_op(",");
        }
        return make(std::move(e));
      }
      expect_op(")");
      return inner;
    }
    if (accept_op("[")) {
      Expr e{Expr::kList};
      while (!accept_op("]")) {
        e.kids.push_back(parse_expr());
        if (!peek_op("]")) expect_op(",");
      }
      return make(std::move(e));
    }
    if (accept_op("{")) {
      Expr e{Expr::kDict};
      while (!accept_op("}")) {
        e.kids.push_back(parse_expr());
        expect_op(":");
        e.kids.push_back(parse_expr());
        if (!peek_op("}")) expect_op(",");
      }
      return make(std::move(e));
    }
    fail("expected an expression");
  }
  ExprPtr postfix(ExprPtr a) {
    for (;;) {
      if (accept_op(".")) {
        std::string n = name();
        if (accept_op("(")) {
          Expr e{Expr::kMethod};
          e.name = n;
          e.kids.push_back(std::move(a));
          parse_args(e);
          a = make(std::move(e));
        } else {
          Expr e{Expr::kAttr};
          e.name = n;
          e.kids.push_back(std::move(a));
          a = make(std::move(e));
        }
      } else if (accept_op("[")) {
        Expr e{Expr::kIndex};
        e.kids.push_back(std::move(a));
        // index or slice [a:b:c] with optional parts (empty parts are null kids)
        ExprPtr parts[3];
        int n = 0;
        bool slice = false;
        for (;;) {
          if (peek_op(":")) {
            slice = true;
            ++p_;
            ++n;
            if (n > 2) fail("bad slice");
            continue;
          }
          if (peek_op("]")) break;
          parts[n] = parse_expr();
        }
        expect_op("]");
        if (slice) {
          e.kind = Expr::kSlice;
          for (auto& p : parts) e.kids.push_back(std::move(p));
        } else {
          if (!parts[0]) fail("empty subscript");
          e.kids.push_back(std::move(parts[0]));
        }
        a = make(std::move(e));
      } else if (accept_op("(")) {
        if (a->kind != Expr::kName) fail("only global functions can be called");
        Expr e{Expr::kCall};
        e.name = a->name;
        parse_args(e);
        a = make(std::move(e));
      } else if (accept_op("|")) {
        Expr e{Expr::kFilter};
        e.name = name();
        e.kids.push_back(std::move(a));
        if (accept_op("(")) parse_args(e);
        a = make(std::move(e));
      } else {
        return a;
      }
    }
  }

  static constexpr int kMaxDepth = 200;
  std::vector<Tok> t_;
  size_t p_ = 0;
  int line_;
  int depth_ = 0, unary_depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Statements.
// ---------------------------------------------------------------------------------------------
class StmtParser {
 public:
  explicit StmtParser(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}

  std::unique_ptr<Template::Node> parse_all() {
    auto root = std::make_unique<Template::Node>();
    root->kind = Template::Node::kBlock;
    std::string end = parse_block(*root, {});
    if (!end.empty()) throw TemplateError(fmt::format("unexpected '{{% {} %}}'", end));
    return root;
  }

 private:
  using Node = Template::Node;

  // Parses nodes into `into` until a statement whose keyword is in `stops`; returns that
  // statement's keyword ("" at end of input) and leaves its parser in `last_`.
  std::string parse_block(Node& into, const std::vector<std::string>& stops) {
    if (++depth_ > 200) throw TemplateError("blocks nested too deeply");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    while (pos_ < pieces_.size()) {
      const Piece& pc = pieces_[pos_++];
      if (pc.kind == Piece::kText) {
        auto n = std::make_unique<Node>();
        n->kind = Node::kText;
        n->text = pc.body;
        into.kids.push_back(std::move(n));
        continue;
      }
      ExprParser p(tokenize_expr(pc.body, pc.line), pc.line);
      if (pc.kind == Piece::kExpr) {
        auto n = std::make_unique<Node>();
        n->kind = Node::kEmit;
        n->expr = p.parse_expr();
        p.expect_end();
        into.kids.push_back(std::move(n));
        continue;
      }
      std::string kw = p.name();
      for (const auto& s : stops)
        if (kw == s) {
          last_ = std::make_unique<ExprParser>(std::move(p));
          return kw;
        }
      if (kw == "if") into.kids.push_back(parse_if(p));
      else if (kw == "for") into.kids.push_back(parse_for(p, pc.line));
      else if (kw == "set") into.kids.push_back(parse_set(p));
      else throw TemplateError(fmt::format("line {}: '{{% {} %}}' is not supported", pc.line, kw));
    }
    return "";
  }

  std::unique_ptr<Node> parse_if(ExprParser& p) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kIf;
    ExprPtr cond = p.parse_expr();
    p.expect_end();
    for (;;) {
      auto body = std::make_unique<Node>();
      body->kind = Node::kBlock;
      std::string end = parse_block(*body, {"elif", "else", "endif"});
      if (end.empty()) throw TemplateError("missing {% endif %}");
      n->conds.push_back(std::move(cond));
      n->bodies.push_back(std::move(body));
      if (end == "endif") return n;
      if (end == "else") {
        last_->expect_end();
        auto els = std::make_unique<Node>();
        els->kind = Node::kBlock;
        if (parse_block(*els, {"endif"}) != "endif") throw TemplateError("missing {% endif %}");
        n->else_body = std::move(els);
        return n;
      }
      cond = last_->parse_expr();  // elif
      last_->expect_end();
    }
  }

  std::unique_ptr<Node> parse_for(ExprParser& p, int line) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kFor;
    n->vars.push_back(p.name());
    while (p.accept_op(",")) n->vars.push_back(p.name());
    if (!p.accept_name("in")) p.fail("expected 'in'");
    // The iterable stops before a trailing "if" filter, so parse without the ternary.
    n->expr = p.parse_expr();
    if (n->expr->kind == Expr::kTernary && n->expr->kids.size() == 2) {
      // "for x in xs if cond": the parser read it as a ternary without else.
      n->filter = std::move(n->expr->kids[0]);
      ExprPtr it = std::move(n->expr->kids[1]);
      n->expr = std::move(it);
    }
    if (p.accept_name("recursive")) throw TemplateError(fmt::format("line {}: recursive loops are not supported", line));
    p.expect_end();
    auto body = std::make_unique<Node>();
    body->kind = Node::kBlock;
    std::string end = parse_block(*body, {"else", "endfor"});
    if (end.empty()) throw TemplateError("missing {% endfor %}");
    n->bodies.push_back(std::move(body));
    if (end == "else") {
      auto els = std::make_unique<Node>();
      els->kind = Node::kBlock;
      if (parse_block(*els, {"endfor"}) != "endfor") throw TemplateError("missing {% endfor %}");
      n->else_body = std::move(els);
    }
    return n;
  }

  std::unique_ptr<Node> parse_set(ExprParser& p) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kSet;
    n->vars.push_back(p.name());
    if (p.accept_op(".")) n->vars.push_back(p.name());  // ns.attr
    if (!p.accept_op("=")) p.fail("block {% set %} is not supported; expected '='");
    n->expr = p.parse_expr();
    p.expect_end();
    return n;
  }

  std::vector<Piece> pieces_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::unique_ptr<ExprParser> last_;
};

}  // namespace

Template::~Template() = default;

absl::StatusOr<std::shared_ptr<const Template>> Template::parse(const std::string& source) {
  try {
    std::shared_ptr<Template> t(new Template());
    t->root_ = StmtParser(lex(source)).parse_all();
    return std::shared_ptr<const Template>(std::move(t));
  } catch (const TemplateError& e) {
    return error(Code::kUnsupported, "chat template: {}", e.what());
  } catch (const std::exception& e) {
    return error(Code::kUnsupported, "chat template: {}", e.what());
  }
}

absl::StatusOr<std::string> Template::render(const Json& context) const {
  try {
    return render_tree(*root_, context);
  } catch (const TemplateError& e) {
    return error(Code::kInvalidArgument, "chat template: {}", e.what());
  } catch (const std::exception& e) {
    return error(Code::kInvalidArgument, "chat template: {}", e.what());
  }
}

}  // namespace bw24::chat
