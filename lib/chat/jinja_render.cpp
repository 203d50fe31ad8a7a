// Tree-walking renderer: scopes (a for-loop body gets its own, as in Jinja, so `set` inside a
// loop does not leak; namespace() objects are how templates carry state out), expression
// evaluation, and the global functions namespace(), raise_exception() and range().
#include <map>

#include "fmt/format.h"
#include "lib/chat/jinja_ast.h"

namespace bw24::chat {
namespace {

class Renderer {
 public:
  explicit Renderer(const Json& ctx) {
    scopes_.emplace_back();
    for (auto it = ctx.begin(); it != ctx.end(); ++it) scopes_.back()[it.key()] = Value::data(it.value());
  }

  void block(const Template::Node& n) {
    for (const auto& k : n.kids) node(*k);
  }
  std::string out;

 private:
  Value* lookup(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  void node(const Template::Node& n) {
    // A budget on work and output: templates are data and must not run forever.
    if (++steps_ > kMaxSteps || out.size() > kMaxOutput) throw TemplateError("template exceeds the rendering budget");
    switch (n.kind) {
      case Template::Node::kBlock: block(n); break;
      case Template::Node::kText: out += n.text; break;
      case Template::Node::kEmit: out += eval(*n.expr).to_str(); break;
      case Template::Node::kIf:
        for (size_t b = 0; b < n.conds.size(); ++b)
          if (eval(*n.conds[b]).truthy()) {
            block(*n.bodies[b]);
            return;
          }
        if (n.else_body) block(*n.else_body);
        break;
      case Template::Node::kFor: run_for(n); break;
      case Template::Node::kSet: {
        Value v = eval(*n.expr);
        if (n.vars.size() == 1) {
          scopes_.back()[n.vars[0]] = std::move(v);
        } else {
          Value* ns = lookup(n.vars[0]);
          if (!ns || ns->kind != Value::Kind::kNamespace)
            throw TemplateError(fmt::format("cannot set attribute on '{}', which is not a namespace", n.vars[0]));
          ns->j[n.vars[1]] = v.is_undefined() ? Json(nullptr) : v.j;
        }
        break;
      }
    }
  }

  void run_for(const Template::Node& n) {
    std::vector<Value> items = iterate(eval(*n.expr));
    if (n.filter) {
      std::vector<Value> kept;
      for (Value& v : items) {
        scopes_.emplace_back();
        bind(n.vars, v);
        if (eval(*n.filter).truthy()) kept.push_back(v);
        scopes_.pop_back();
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      if (n.else_body) block(*n.else_body);
      return;
    }
    const int64_t len = static_cast<int64_t>(items.size());
    for (int64_t k = 0; k < len; ++k) {
      scopes_.emplace_back();
      Json loop = Json::object();
      loop["index0"] = k;
      loop["index"] = k + 1;
      loop["revindex0"] = len - 1 - k;
      loop["revindex"] = len - k;
      loop["first"] = k == 0;
      loop["last"] = k == len - 1;
      loop["length"] = len;
      if (k > 0) loop["previtem"] = items[static_cast<size_t>(k - 1)].j;
      if (k + 1 < len) loop["nextitem"] = items[static_cast<size_t>(k + 1)].j;
      scopes_.back()["loop"] = Value::data(std::move(loop));
      bind(n.vars, items[static_cast<size_t>(k)]);
      block(*n.bodies[0]);
      scopes_.pop_back();
    }
  }

  void bind(const std::vector<std::string>& vars, const Value& v) {
    if (vars.size() == 1) {
      scopes_.back()[vars[0]] = v;
      return;
    }
    std::vector<Value> parts = iterate(v);
    if (parts.size() != vars.size())
      throw TemplateError(fmt::format("cannot unpack {} values into {} loop variables", parts.size(), vars.size()));
    for (size_t i = 0; i < vars.size(); ++i) scopes_.back()[vars[i]] = parts[i];
  }

  std::vector<Value> args_of(const Expr& e, size_t first) {
    std::vector<Value> a;
    for (size_t i = first; i < e.kids.size(); ++i) a.push_back(eval(*e.kids[i]));
    return a;
  }
  std::vector<std::pair<std::string, Value>> kwargs_of(const Expr& e) {
    std::vector<std::pair<std::string, Value>> kw;
    for (const auto& [k, v] : e.kwargs) kw.emplace_back(k, eval(*v));
    return kw;
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::kLiteral: return e.value;
      case Expr::kName: {
        Value* v = lookup(e.name);
        return v ? *v : Value::undefined();
      }
      case Expr::kAttr: return get_attr(eval(*e.kids[0]), e.name);
      case Expr::kIndex: return get_item(eval(*e.kids[0]), eval(*e.kids[1]));
      case Expr::kSlice: {
        auto part = [&](size_t i) { return e.kids[i] ? eval(*e.kids[i]) : Value::none(); };
        return slice(eval(*e.kids[0]), part(1), part(2), part(3));
      }
      case Expr::kCall: return call(e);
      case Expr::kMethod: return call_method(e.name, eval(*e.kids[0]), args_of(e, 1), kwargs_of(e));
      case Expr::kFilter: return call_filter(e.name, eval(*e.kids[0]), args_of(e, 1), kwargs_of(e));
      case Expr::kTest: {
        if (e.name == "defined" || e.name == "undefined") {
          bool defined = !eval(*e.kids[0]).is_undefined();
          return Value::data((e.name == "defined") == defined ? !e.negate : e.negate);
        }
        bool r = call_test(e.name, eval(*e.kids[0]), args_of(e, 1));
        return Value::data(e.negate ? !r : r);
      }
      case Expr::kUnary: {
        Value v = eval(*e.kids[0]);
        if (e.name == "not") return Value::data(!v.truthy());
        if (v.is_int()) return Value::data(-v.i());
        if (v.is_number()) return Value::data(-v.f());
        throw TemplateError("unary minus on a non-number");
      }
      case Expr::kBinary: {
        if (e.name == "and") {
          Value a = eval(*e.kids[0]);
          return a.truthy() ? eval(*e.kids[1]) : a;
        }
        if (e.name == "or") {
          Value a = eval(*e.kids[0]);
          return a.truthy() ? a : eval(*e.kids[1]);
        }
        return binary_op(e.name, eval(*e.kids[0]), eval(*e.kids[1]));
      }
      case Expr::kTernary:
        if (eval(*e.kids[0]).truthy()) return eval(*e.kids[1]);
        return e.kids.size() > 2 ? eval(*e.kids[2]) : Value::undefined();
      case Expr::kList: {
        Json arr = Json::array();
        for (const auto& k : e.kids) {
          Value v = eval(*k);
          arr.push_back(v.is_undefined() ? Json(nullptr) : v.j);
        }
        return Value::data(std::move(arr));
      }
      case Expr::kDict: {
        Json obj = Json::object();
        for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
          Value k = eval(*e.kids[i]);
          if (!k.is_string()) throw TemplateError("dict keys must be strings");
          Value v = eval(*e.kids[i + 1]);
          obj[k.s()] = v.is_undefined() ? Json(nullptr) : v.j;
        }
        return Value::data(std::move(obj));
      }
    }
    return Value::undefined();
  }

  Value call(const Expr& e) {
    if (e.name == "namespace") {
      Value ns;
      ns.kind = Value::Kind::kNamespace;
      ns.j = Json::object();
      for (const auto& [k, v] : kwargs_of(e)) ns.j[k] = v.is_undefined() ? Json(nullptr) : v.j;
      for (const Value& a : args_of(e, 0))
        if (a.is_dict())
          for (auto it = a.j.begin(); it != a.j.end(); ++it) ns.j[it.key()] = it.value();
      return ns;
    }
    if (e.name == "raise_exception") {
      std::vector<Value> a = args_of(e, 0);
      throw TemplateError(a.empty() ? "raise_exception() called" : a[0].to_str());
    }
    if (e.name == "range") {
      std::vector<Value> a = args_of(e, 0);
      int64_t start = 0, stop = 0, step = 1;
      if (a.size() == 1) stop = a[0].i();
      else if (a.size() >= 2) { start = a[0].i(); stop = a[1].i(); }
      if (a.size() == 3) step = a[2].i();
      if (step == 0 || a.empty()) throw TemplateError("range() needs a non-zero step");
      Json arr = Json::array();
      for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
        arr.push_back(k);
        if (arr.size() > 1000000) throw TemplateError("range() too long");
      }
      return Value::data(std::move(arr));
    }
    Value* fn = lookup(e.name);
    throw TemplateError(fn ? fmt::format("'{}' is not callable", e.name)
                           : fmt::format("function '{}' is not supported", e.name));
  }

  static constexpr uint64_t kMaxSteps = 5'000'000;
  static constexpr size_t kMaxOutput = 16u << 20;
  uint64_t steps_ = 0;
  std::vector<std::map<std::string, Value>> scopes_;
};

}  // namespace

std::string render_tree(const Template::Node& root, const Json& context) {
  Renderer r(context);
  r.block(root);
  return std::move(r.out);
}

}  // namespace bw24::chat
