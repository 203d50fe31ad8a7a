// JSON string literal writing shared by the metadata renderer and the template engine: the
// escapes Python's json.dumps(ensure_ascii=False) uses, so both print byte-identical text.
#pragma once

#include <string>
#include <string_view>

namespace bw24 {

// Appends "s" with ", \, and control characters escaped; other bytes (UTF-8) verbatim.
void append_json_string(std::string& out, std::string_view s);

}  // namespace bw24
