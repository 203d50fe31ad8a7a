#include "lib/chat/jinja_value.h"

#include <cmath>
#include <cstdio>

#include "fmt/format.h"
#include "lib/core/json_text.h"
#include "lib/tokenizer/unicode.h"

namespace bw24::chat {

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) out.push_back(tokenizer::next_codepoint(s, i));
  return out;
}

std::string from_code_points(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t k = begin; k < end; ++k) tokenizer::append_utf8(out, cps[k]);
  return out;
}

std::string py_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: exponent form below 1e-4 or from 1e16.
  std::string s = fmt::format("{}", d);
  double a = std::fabs(d);
  if (a != 0 && (a < 1e-4 || a >= 1e16)) {
    s = fmt::format("{:e}", d);
    // fmt's {:e} has a fixed precision; rebuild from the shortest digits instead.
    std::string digits = fmt::format("{}", d);
    size_t e = digits.find('e');
    if (e != std::string::npos) {
      std::string mant = digits.substr(0, e), ex = digits.substr(e + 1);
      int exp = std::stoi(ex);
      return fmt::format("{}e{}{:02d}", mant, exp < 0 ? "-" : "+", std::abs(exp));
    }
    return s;
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {


void dump(std::string& out, const Json& j, int indent, int depth) {
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  if (j.is_null()) out += "null";
  else if (j.is_boolean()) out += j.get<bool>() ? "true" : "false";
  else if (j.is_number_integer()) out += j.dump();
  else if (j.is_number_float()) {
    double d = j.get<double>();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : py_float(d);
  } else if (j.is_string()) append_json_string(out, j.get_ref<const std::string&>());
  else if (j.is_array()) {
    if (j.empty()) { out += "[]"; return; }
    out += '[';
    bool first = true;
    for (const Json& e : j) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) newline(depth + 1);
      dump(out, e, indent, depth + 1);
    }
    if (indent >= 0) newline(depth);
    out += ']';
  } else if (j.is_object()) {
    if (j.empty()) { out += "{}"; return; }
    out += '{';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) newline(depth + 1);
      append_json_string(out, it.key());
      out += ": ";
      dump(out, it.value(), indent, depth + 1);
    }
    if (indent >= 0) newline(depth);
    out += '}';
  }
}

std::string py_repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(q)) { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  out += q;
  return out;
}

std::string py_repr(const Json& j) {
  if (j.is_null()) return "None";
  if (j.is_boolean()) return j.get<bool>() ? "True" : "False";
  if (j.is_number_integer()) return j.dump();
  if (j.is_number_float()) return py_float(j.get<double>());
  if (j.is_string()) return py_repr_string(j.get_ref<const std::string&>());
  std::string out;
  if (j.is_array()) {
    out += '[';
    for (size_t k = 0; k < j.size(); ++k) out += (k ? ", " : "") + py_repr(j[k]);
    return out + ']';
  }
  out += '{';
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += (first ? "" : ", ") + py_repr_string(it.key()) + ": " + py_repr(it.value());
    first = false;
  }
  return out + '}';
}

}  // namespace

std::string py_json(const Json& j, int indent) {
  std::string out;
  dump(out, j, indent, 0);
  return out;
}

bool Value::truthy() const {
  if (kind == Kind::kUndefined) return false;
  if (kind == Kind::kNamespace) return true;
  if (j.is_null()) return false;
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<int64_t>() != 0;
  if (j.is_number_float()) return j.get<double>() != 0.0;
  if (j.is_string()) return !j.get_ref<const std::string&>().empty();
  return !j.empty();
}

std::string Value::to_str() const {
  if (kind == Kind::kUndefined) return "";
  if (kind == Kind::kNamespace) return "<Namespace " + py_repr(j) + ">";
  if (j.is_string()) return j.get<std::string>();
  return py_repr(j);
}

std::string Value::repr() const { return kind == Kind::kUndefined ? "Undefined" : py_repr(j); }

bool Value::equals(const Value& o) const {
  if (kind == Kind::kUndefined || o.kind == Kind::kUndefined) return kind == o.kind;
  if (j.is_number() && o.j.is_number()) {
    if (j.is_boolean() || o.j.is_boolean()) return j == o.j;
    return j.get<double>() == o.j.get<double>();
  }
  if (j.is_boolean() != o.j.is_boolean()) {  // Python: True == 1
    const Json& b = j.is_boolean() ? j : o.j;
    const Json& n = j.is_boolean() ? o.j : j;
    return n.is_number() && n.get<double>() == (b.get<bool>() ? 1.0 : 0.0);
  }
  return j == o.j;
}

}  // namespace bw24::chat
