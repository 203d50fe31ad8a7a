#include "lib/core/options.h"

#include <algorithm>

#include "lib/core/status.h"

namespace bw24 {
namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

absl::StatusOr<OptionMap> parse_options(std::string_view text,
                                        const std::vector<std::string_view>& known) {
  OptionMap out;
  while (!text.empty()) {
    size_t semi = text.find(';');
    std::string_view item = trim(text.substr(0, semi));
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return error(Code::kInvalidArgument, "option '{}' is not of the form key=value", item);
    std::string key(trim(item.substr(0, eq)));
    std::string value(trim(item.substr(eq + 1)));
    if (std::find(known.begin(), known.end(), key) == known.end())
      return error(Code::kUnsupported, "unknown option '{}' (known: {})", key, fmt::join(known, ", "));
    out[key] = value;
  }
  return out;
}

}  // namespace bw24
