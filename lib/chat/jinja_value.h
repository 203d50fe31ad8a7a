// Values of the Jinja subset: JSON-like data (ordered objects) plus Jinja's undefined and
// namespace(), with Python's semantics for truth, equality, str() and repr().
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace bw24::chat {

using Json = nlohmann::ordered_json;

// Raised while parsing or rendering; Template turns it into a status.
struct TemplateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Value {
  enum class Kind { kUndefined, kData, kNamespace };
  Kind kind = Kind::kUndefined;
  Json j;  // kData: the value; kNamespace: an object of attributes

  static Value undefined() { return {}; }
  static Value data(Json v) { return {Kind::kData, std::move(v)}; }
  static Value none() { return data(nullptr); }
  static Value str(std::string s) { return data(Json(std::move(s))); }

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kData && j.is_null(); }
  bool is_string() const { return kind == Kind::kData && j.is_string(); }
  bool is_list() const { return kind == Kind::kData && j.is_array(); }
  bool is_dict() const { return (kind == Kind::kData && j.is_object()) || kind == Kind::kNamespace; }
  bool is_number() const { return kind == Kind::kData && j.is_number(); }
  bool is_int() const { return kind == Kind::kData && j.is_number_integer(); }
  bool is_bool() const { return kind == Kind::kData && j.is_boolean(); }

  const std::string& s() const { return j.get_ref<const std::string&>(); }
  int64_t i() const { return j.get<int64_t>(); }
  double f() const { return j.get<double>(); }

  bool truthy() const;
  std::string to_str() const;   // Python str(): what {{ }} prints
  std::string repr() const;     // Python repr()
  bool equals(const Value& o) const;
};

// Python's float repr (shortest round-trip digits, "1.0", "1e-05", "inf").
std::string py_float(double d);
// Python's json.dumps(x, ensure_ascii=False, indent=indent) (indent < 0: none).
std::string py_json(const Json& j, int indent);

// Unicode code points of UTF-8 text and back (Python indexes strings by code point).
std::vector<uint32_t> code_points(const std::string& s);
std::string from_code_points(const std::vector<uint32_t>& cps, size_t begin, size_t end);

}  // namespace bw24::chat
