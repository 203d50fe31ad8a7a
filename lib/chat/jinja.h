// A Jinja2 subset, enough for the chat templates models ship (Qwen3, SmolLM2, Gemma 3, Phi-3,
// ChatML/Llama-3 styles), rendering byte-identically to Python jinja2 configured the way Hugging
// Face transformers configures it (trim_blocks, lstrip_blocks, sandboxed, tojson with
// ensure_ascii=False). Values are JSON-like (ordered objects) plus Jinja's undefined and
// namespace(). Anything outside the subset is a clear error naming the construct, never a guess.
//
// Supported: {{ }}, {% %}, {# #}, "-" whitespace control; if/elif/else, for (loop.index0/index/
// first/last/length/revindex, else branch), set (incl. ns.attr and block-less tuple-free forms),
// namespace(), raise_exception(); literals (str, int, float, bool, none, list, dict), attribute,
// subscript and slice, + - * / // % ~, comparisons, in / not in, and / or / not, a if b else c,
// filters (length count tojson trim upper lower default first last join string int float list
// items capitalize title replace safe abs round unique sort reverse map select reject selectattr
// rejectattr), tests (defined undefined none string number integer float mapping iterable
// sequence boolean true false even odd in equalto eq ne lt gt le ge), string methods (startswith
// endswith split rsplit strip lstrip rstrip upper lower replace title capitalize format join find
// count), dict methods (items keys values get).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace bw24::chat {

class Template {
 public:
  // Parse once; Code::kUnsupported with line and construct for anything outside the subset.
  static absl::StatusOr<std::shared_ptr<const Template>> parse(const std::string& source);
  // Render with top-level variables from `context` (an object).
  absl::StatusOr<std::string> render(const nlohmann::ordered_json& context) const;

  struct Node;
  ~Template();

 private:
  Template() = default;
  std::unique_ptr<Node> root_;
};

}  // namespace bw24::chat
