// Filters, tests, methods and operators of the Jinja subset, each with Python's semantics.
#include <algorithm>
#include <cmath>

#include "fmt/format.h"
#include "lib/chat/jinja_ast.h"

namespace bw24::chat {
namespace {

[[noreturn]] void fail(const std::string& m) { throw TemplateError(m); }

const Value* kwarg(const std::vector<std::pair<std::string, Value>>& kw, const char* name) {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return nullptr;
}

// Python str.strip family: no chars = Unicode whitespace (the ASCII set suffices for templates).
std::string strip(const std::string& s, const Value* chars, bool left, bool right) {
  std::vector<uint32_t> cps = code_points(s), set;
  if (chars && chars->is_string()) set = code_points(chars->s());
  auto is_strip = [&](uint32_t c) {
    if (!set.empty() || (chars && chars->is_string())) return std::find(set.begin(), set.end(), c) != set.end();
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1c ||
           c == 0x1d || c == 0x1e || c == 0x1f || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
  };
  size_t b = 0, e = cps.size();
  if (left) while (b < e && is_strip(cps[b])) ++b;
  if (right) while (e > b && is_strip(cps[e - 1])) --e;
  return from_code_points(cps, b, e);
}

Json split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
  Json out = Json::array();
  if (!sep || sep->is_none()) {  // whitespace split, empty strings dropped
    std::string cur;
    std::vector<std::string> parts;
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        if (!cur.empty()) parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) parts.push_back(cur);
    for (auto& p : parts) out.push_back(p);
    return out;
  }
  const std::string& d = sep->s();
  if (d.empty()) fail("split(): empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    size_t start = 0;
    for (int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      size_t p = s.find(d, start);
      if (p == std::string::npos) break;
      parts.push_back(s.substr(start, p - start));
      start = p + d.size();
    }
    parts.push_back(s.substr(start));
  } else {
    size_t end = s.size();
    for (int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      if (end < d.size()) break;
      size_t p = s.rfind(d, end - d.size());
      if (p == std::string::npos) break;
      parts.insert(parts.begin(), s.substr(p + d.size(), end - p - d.size()));
      end = p;
    }
    parts.insert(parts.begin(), s.substr(0, end));
  }
  for (auto& p : parts) out.push_back(p);
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t start = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    size_t p = s.find(from, start);
    if (p == std::string::npos) break;
    out += s.substr(start, p - start) + to;
    start = p + from.size();
  }
  return out + s.substr(start);
}

std::string capitalize(const std::string& s) {
  std::string out = s;
  bool first = true;
  for (char& c : out) {
    c = first ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
              : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    first = false;
  }
  return out;
}

std::string title(const std::string& s) {
  std::string out = s;
  bool prev_alpha = false;
  for (char& c : out) {
    bool alpha = std::isalpha(static_cast<unsigned char>(c));
    if (alpha) c = prev_alpha ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                              : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    prev_alpha = alpha;
  }
  return out;
}

std::string case_map(const std::string& s, bool upper) {
  std::string out = s;
  for (char& c : out)
    c = upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
              : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int64_t as_int(const Value& v, const char* what) {
  if (v.is_int() || v.is_bool()) return v.j.get<int64_t>();
  if (v.is_number()) return static_cast<int64_t>(v.f());
  fail(fmt::format("{} needs an integer, got {}", what, v.repr()));
}

bool starts_or_ends(const std::string& s, const Value& arg, bool start) {
  auto one = [&](const std::string& p) {
    return s.size() >= p.size() && (start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0);
  };
  if (arg.is_string()) return one(arg.s());
  if (arg.is_list()) {
    for (const Json& p : arg.j)
      if (p.is_string() && one(p.get<std::string>())) return true;
    return false;
  }
  fail("startswith/endswith needs a string or a tuple of strings");
}

}  // namespace

std::vector<Value> iterate(const Value& x) {
  std::vector<Value> out;
  if (x.is_undefined() || x.is_none()) {
    if (x.is_none()) fail("'NoneType' object is not iterable");
    return out;  // Jinja iterates an undefined as empty
  }
  if (x.is_list()) {
    for (const Json& e : x.j) out.push_back(Value::data(e));
  } else if (x.is_dict()) {
    for (auto it = x.j.begin(); it != x.j.end(); ++it) out.push_back(Value::str(it.key()));
  } else if (x.is_string()) {
    std::vector<uint32_t> cps = code_points(x.s());
    for (size_t i = 0; i < cps.size(); ++i) out.push_back(Value::str(from_code_points(cps, i, i + 1)));
  } else {
    fail(fmt::format("{} is not iterable", x.repr()));
  }
  return out;
}

Value get_attr(const Value& obj, const std::string& name) {
  if (obj.is_dict()) {
    auto it = obj.j.find(name);
    return it == obj.j.end() ? Value::undefined() : Value::data(*it);
  }
  if (obj.is_undefined()) fail(fmt::format("'{}' of an undefined value", name));
  return Value::undefined();
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_dict()) {
    if (!key.is_string()) return Value::undefined();
    return get_attr(obj, key.s());
  }
  if (obj.is_list() || obj.is_string()) {
    if (!key.is_int()) fail("list indices must be integers");
    int64_t n = obj.is_list() ? static_cast<int64_t>(obj.j.size()) : 0;
    std::vector<uint32_t> cps;
    if (obj.is_string()) {
      cps = code_points(obj.s());
      n = static_cast<int64_t>(cps.size());
    }
    int64_t i = key.i();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined();
    if (obj.is_list()) return Value::data(obj.j[static_cast<size_t>(i)]);
    return Value::str(from_code_points(cps, static_cast<size_t>(i), static_cast<size_t>(i + 1)));
  }
  if (obj.is_undefined()) fail("subscript of an undefined value");
  return Value::undefined();
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  int64_t st = step.is_none() ? 1 : as_int(step, "slice step");
  if (st == 0) fail("slice step cannot be zero");
  std::vector<uint32_t> cps;
  int64_t n;
  if (obj.is_list()) n = static_cast<int64_t>(obj.j.size());
  else if (obj.is_string()) {
    cps = code_points(obj.s());
    n = static_cast<int64_t>(cps.size());
  } else fail(fmt::format("cannot slice {}", obj.repr()));
  // Python's slice.indices().
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t x = as_int(v, "slice bound");
    if (x < 0) x += n;
    if (st > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t b = clamp(start, st > 0 ? 0 : n - 1), e = clamp(stop, st > 0 ? n : -1);
  std::vector<int64_t> idx;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) idx.push_back(i);
  if (obj.is_list()) {
    Json out = Json::array();
    for (int64_t i : idx) out.push_back(obj.j[static_cast<size_t>(i)]);
    return Value::data(std::move(out));
  }
  std::string out;
  for (int64_t i : idx) out += from_code_points(cps, static_cast<size_t>(i), static_cast<size_t>(i + 1));
  return Value::str(out);
}

Value binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return Value::data(a.equals(b));
  if (op == "!=") return Value::data(!a.equals(b));
  if (op == "~") return Value::str(a.to_str() + b.to_str());
  if (op == "in" || op == "not in") {
    bool r = false;
    if (b.is_string()) {
      if (!a.is_string()) fail("'in <string>' requires a string on the left");
      r = b.s().find(a.s()) != std::string::npos;
    } else if (b.is_list()) {
      for (const Json& e : b.j) r = r || Value::data(e).equals(a);
    } else if (b.is_dict()) {
      r = a.is_string() && b.j.contains(a.s());
    } else if (!b.is_undefined()) {
      fail(fmt::format("argument of type {} is not iterable", b.repr()));
    }
    return Value::data(op == "in" ? r : !r);
  }
  if (a.is_undefined() || b.is_undefined()) fail(fmt::format("'{}' on an undefined value", op));
  const bool nums = (a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool());
  const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::str(a.s() + b.s());
    if (a.is_list() && b.is_list()) {
      Json out = a.j;
      for (const Json& e : b.j) out.push_back(e);
      return Value::data(std::move(out));
    }
    if (ints) return Value::data(a.j.get<int64_t>() + b.j.get<int64_t>());
    if (nums) return Value::data(a.j.get<double>() + b.j.get<double>());
    fail(fmt::format("cannot add {} and {}", a.repr(), b.repr()));
  }
  if (op == "*" && (a.is_string() || b.is_string()) && (a.is_int() || b.is_int())) {
    const std::string& s = a.is_string() ? a.s() : b.s();
    int64_t n = a.is_int() ? a.i() : b.i();
    std::string out;
    for (int64_t k = 0; k < n && out.size() < (1u << 24); ++k) out += s;
    return Value::str(out);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.s().compare(b.s());
    if (op == "<") return Value::data(c < 0);
    if (op == ">") return Value::data(c > 0);
    if (op == "<=") return Value::data(c <= 0);
    if (op == ">=") return Value::data(c >= 0);
  }
  if (!nums) fail(fmt::format("unsupported operands for '{}': {} and {}", op, a.repr(), b.repr()));
  double x = a.j.get<double>(), y = b.j.get<double>();
  if (op == "<") return Value::data(x < y);
  if (op == ">") return Value::data(x > y);
  if (op == "<=") return Value::data(x <= y);
  if (op == ">=") return Value::data(x >= y);
  if (op == "-") return ints ? Value::data(a.j.get<int64_t>() - b.j.get<int64_t>()) : Value::data(x - y);
  if (op == "*") return ints ? Value::data(a.j.get<int64_t>() * b.j.get<int64_t>()) : Value::data(x * y);
  if (op == "/") {
    if (y == 0) fail("division by zero");
    return Value::data(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0) fail("division by zero");
    if (ints) {
      int64_t p = a.j.get<int64_t>(), q = b.j.get<int64_t>();
      int64_t d = p / q, m = p % q;
      if (m != 0 && ((m < 0) != (q < 0))) { --d; m += q; }  // Python floors
      return Value::data(op == "//" ? d : m);
    }
    double d = std::floor(x / y);
    return Value::data(op == "//" ? d : x - d * y);
  }
  fail(fmt::format("operator '{}' is not supported", op));
}

bool call_test(const std::string& name, const Value& x, const std::vector<Value>& args) {
  if (name == "none") return x.is_none();
  if (name == "string") return x.is_string();
  if (name == "number") return x.is_number();
  if (name == "integer") return x.is_int();
  if (name == "float") return x.kind == Value::Kind::kData && x.j.is_number_float();
  if (name == "boolean") return x.is_bool();
  if (name == "true") return x.is_bool() && x.j.get<bool>();
  if (name == "false") return x.is_bool() && !x.j.get<bool>();
  if (name == "mapping") return x.is_dict();
  if (name == "iterable") return x.is_list() || x.is_dict() || x.is_string();
  if (name == "sequence") return x.is_list() || x.is_string() || x.is_dict();
  if (name == "even" || name == "odd") {
    int64_t v = as_int(x, "even/odd");
    return (v % 2 == 0) == (name == "even");
  }
  if (name == "callable") return false;
  if (args.empty()) fail(fmt::format("test '{}' is not supported", name));
  const Value& y = args[0];
  if (name == "equalto" || name == "eq" || name == "sameas") return x.equals(y);
  if (name == "ne") return !x.equals(y);
  if (name == "in") return binary_op("in", x, y).truthy();
  if (name == "lt") return binary_op("<", x, y).truthy();
  if (name == "gt") return binary_op(">", x, y).truthy();
  if (name == "le") return binary_op("<=", x, y).truthy();
  if (name == "ge") return binary_op(">=", x, y).truthy();
  fail(fmt::format("test '{}' is not supported", name));
}

Value call_filter(const std::string& name, const Value& x, const std::vector<Value>& args,
                  const std::vector<std::pair<std::string, Value>>& kwargs) {
  auto arg = [&](size_t i, const char* kw) -> const Value* {
    if (i < args.size()) return &args[i];
    return kwarg(kwargs, kw);
  };
  if (name == "length" || name == "count") {
    if (x.is_string()) return Value::data(static_cast<int64_t>(code_points(x.s()).size()));
    if (x.is_list() || x.is_dict()) return Value::data(static_cast<int64_t>(x.j.size()));
    if (x.is_undefined()) return Value::data(0);
    fail(fmt::format("object of type {} has no length", x.repr()));
  }
  if (name == "tojson") {
    const Value* ind = arg(0, "indent");
    return Value::str(py_json(x.is_undefined() ? Json(nullptr) : x.j, ind && !ind->is_none() ? static_cast<int>(as_int(*ind, "indent")) : -1));
  }
  if (name == "safe" || name == "escape" || name == "e") return x;
  if (name == "string") return Value::str(x.to_str());
  if (name == "trim") return Value::str(strip(x.to_str(), arg(0, "chars"), true, true));
  if (name == "upper") return Value::str(case_map(x.to_str(), true));
  if (name == "lower") return Value::str(case_map(x.to_str(), false));
  if (name == "capitalize") return Value::str(capitalize(x.to_str()));
  if (name == "title") return Value::str(title(x.to_str()));
  if (name == "default" || name == "d") {
    const Value* d = arg(0, "default_value");
    const Value* boolean = arg(1, "boolean");
    bool use = x.is_undefined() || (boolean && boolean->truthy() && !x.truthy());
    return use ? (d ? *d : Value::str("")) : x;
  }
  if (name == "first" || name == "last") {
    std::vector<Value> items = iterate(x);
    if (items.empty()) return Value::undefined();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "join") {
    const Value* sep = arg(0, "d");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(x)) {
      if (!first && sep) out += sep->to_str();
      first = false;
      out += v.to_str();
    }
    return Value::str(out);
  }
  if (name == "list") {
    Json out = Json::array();
    for (const Value& v : iterate(x)) out.push_back(v.j);
    return Value::data(std::move(out));
  }
  if (name == "reverse") {
    if (x.is_string()) return slice(x, Value::none(), Value::none(), Value::data(-1));
    Json out = Json::array();
    for (const Value& v : iterate(x)) out.insert(out.begin(), v.j);
    return Value::data(std::move(out));
  }
  if (name == "items") {
    if (!x.is_dict()) fail("items() of a non-mapping");
    Json out = Json::array();
    for (auto it = x.j.begin(); it != x.j.end(); ++it) out.push_back(Json::array({it.key(), it.value()}));
    return Value::data(std::move(out));
  }
  if (name == "int") {
    if (x.is_string()) {
      try {
        return Value::data(static_cast<int64_t>(std::stoll(x.s())));
      } catch (...) {
        return Value::data(0);
      }
    }
    return Value::data(x.is_number() || x.is_bool() ? as_int(x, "int") : 0);
  }
  if (name == "float") return Value::data(x.is_number() ? x.f() : 0.0);
  if (name == "abs") return x.is_int() ? Value::data(std::llabs(x.i())) : Value::data(std::fabs(x.f()));
  if (name == "replace") {
    if (args.size() < 2) fail("replace needs two arguments");
    return Value::str(replace_all(x.to_str(), args[0].to_str(), args[1].to_str(), args.size() > 2 ? as_int(args[2], "count") : -1));
  }
  if (name == "selectattr" || name == "rejectattr") {
    if (args.empty()) fail(name + " needs an attribute name");
    Json out = Json::array();
    for (const Value& v : iterate(x)) {
      Value a = get_attr(v, args[0].to_str());
      bool ok = args.size() == 1 ? a.truthy()
                                 : (args[1].to_str() == "defined" || args[1].to_str() == "undefined"
                                        ? (args[1].to_str() == "defined") != a.is_undefined()
                                        : call_test(args[1].to_str(), a, std::vector<Value>(args.begin() + 2, args.end())));
      if (ok == (name == "selectattr")) out.push_back(v.j);
    }
    return Value::data(std::move(out));
  }
  if (name == "map") {
    const Value* attr = kwarg(kwargs, "attribute");
    Json out = Json::array();
    for (const Value& v : iterate(x)) {
      if (attr) out.push_back(get_attr(v, attr->to_str()).j);
      else if (!args.empty()) out.push_back(call_filter(args[0].to_str(), v, {}, {}).j);
      else fail("map needs a filter name or attribute=");
    }
    return Value::data(std::move(out));
  }
  fail(fmt::format("filter '{}' is not supported", name));
}

Value call_method(const std::string& name, const Value& self, const std::vector<Value>& args,
                  const std::vector<std::pair<std::string, Value>>& kwargs) {
  auto arg = [&](size_t i) -> const Value* { return i < args.size() ? &args[i] : nullptr; };
  if (self.is_string()) {
    const std::string& s = self.s();
    if (name == "startswith" || name == "endswith") {
      if (args.empty()) fail(name + "() needs an argument");
      return Value::data(starts_or_ends(s, args[0], name == "startswith"));
    }
    if (name == "strip") return Value::str(strip(s, arg(0), true, true));
    if (name == "lstrip") return Value::str(strip(s, arg(0), true, false));
    if (name == "rstrip") return Value::str(strip(s, arg(0), false, true));
    if (name == "split" || name == "rsplit") {
      const Value* sep = arg(0) ? arg(0) : kwarg(kwargs, "sep");
      const Value* mx = arg(1) ? arg(1) : kwarg(kwargs, "maxsplit");
      return Value::data(split(s, sep, mx ? as_int(*mx, "maxsplit") : -1, name == "rsplit"));
    }
    if (name == "upper" || name == "lower") return Value::str(case_map(s, name == "upper"));
    if (name == "title") return Value::str(title(s));
    if (name == "capitalize") return Value::str(capitalize(s));
    if (name == "replace") {
      if (args.size() < 2) fail("replace() needs two arguments");
      return Value::str(replace_all(s, args[0].to_str(), args[1].to_str(), args.size() > 2 ? as_int(args[2], "count") : -1));
    }
    if (name == "find") {
      if (args.empty()) fail("find() needs an argument");
      size_t p = s.find(args[0].to_str());
      return Value::data(p == std::string::npos ? int64_t{-1} : static_cast<int64_t>(code_points(s.substr(0, p)).size()));
    }
    if (name == "count") {
      if (args.empty() || args[0].to_str().empty()) fail("count() needs a non-empty argument");
      int64_t n = 0;
      for (size_t p = s.find(args[0].to_str()); p != std::string::npos; p = s.find(args[0].to_str(), p + args[0].to_str().size())) ++n;
      return Value::data(n);
    }
    if (name == "join") {
      if (args.empty()) fail("join() needs an argument");
      std::string out;
      bool first = true;
      for (const Value& v : iterate(args[0])) {
        if (!first) out += s;
        first = false;
        out += v.to_str();
      }
      return Value::str(out);
    }
  }
  if (self.is_dict()) {
    if (name == "items") return call_filter("items", self, {}, {});
    if (name == "keys" || name == "values") {
      Json out = Json::array();
      for (auto it = self.j.begin(); it != self.j.end(); ++it) out.push_back(name == "keys" ? Json(it.key()) : it.value());
      return Value::data(std::move(out));
    }
    if (name == "get") {
      if (args.empty()) fail("get() needs a key");
      Value v = get_item(self, args[0]);
      return v.is_undefined() ? (args.size() > 1 ? args[1] : Value::none()) : v;
    }
  }
  if (self.is_undefined()) fail(fmt::format("'{}()' called on an undefined value", name));
  fail(fmt::format("method '{}' of {} is not supported", name, self.repr()));
}

}  // namespace bw24::chat
