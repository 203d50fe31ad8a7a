// The parsed form of a template, shared by the parser (jinja.cpp) and the renderer
// (jinja_render.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/chat/jinja.h"
#include "lib/chat/jinja_value.h"

namespace bw24::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum Kind {
    kLiteral,  // value
    kName,     // name
    kAttr,     // kids[0].name
    kIndex,    // kids[0][kids[1]]
    kSlice,    // kids[0][kids[1]:kids[2]:kids[3]] (null kids = omitted)
    kCall,     // name(kids..., kwargs)
    kMethod,   // kids[0].name(kids[1:]..., kwargs)
    kFilter,   // kids[0] | name(kids[1:]..., kwargs)
    kTest,     // kids[0] is [not] name(kids[1:]...)
    kUnary,    // name in {"not", "-"}
    kBinary,   // kids[0] name kids[1]
    kTernary,  // kids[1] if kids[0] else kids[2] (kids[2] optional)
    kList,
    kDict,     // kids: key, value, key, value, ...
  };
  explicit Expr(Kind k) : kind(k) {}
  Kind kind;
  std::string name;
  Value value;
  bool negate = false;
  std::vector<ExprPtr> kids;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Template::Node {
  enum Kind { kBlock, kText, kEmit, kIf, kFor, kSet } kind = kBlock;
  std::string text;                         // kText
  ExprPtr expr;                             // kEmit, kFor (iterable), kSet (value)
  ExprPtr filter;                           // kFor: "if" filter
  std::vector<std::string> vars;            // kFor targets; kSet: name [, attr]
  std::vector<ExprPtr> conds;               // kIf
  std::vector<std::unique_ptr<Node>> bodies;  // kIf branches; kFor body
  std::unique_ptr<Node> else_body;          // kIf / kFor
  std::vector<std::unique_ptr<Node>> kids;  // kBlock
};

std::string render_tree(const Template::Node& root, const Json& context);

// Builtins (jinja_builtins.cpp).
Value call_filter(const std::string& name, const Value& x, const std::vector<Value>& args,
                  const std::vector<std::pair<std::string, Value>>& kwargs);
bool call_test(const std::string& name, const Value& x, const std::vector<Value>& args);
Value call_method(const std::string& name, const Value& self, const std::vector<Value>& args,
                  const std::vector<std::pair<std::string, Value>>& kwargs);
Value binary_op(const std::string& op, const Value& a, const Value& b);
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
std::vector<Value> iterate(const Value& x);

}  // namespace bw24::chat
