// UTF-8 helpers for the tokenizers: sanitizing (invalid sequences -> U+FFFD, one per maximal
// subpart, as Python's bytes.decode(errors="replace") does), code point iteration, and GPT-2's
// byte <-> printable-code-point map used by byte-level BPE vocabularies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bw24::tokenizer {

// Replace every ill-formed UTF-8 subsequence with U+FFFD; valid input is returned unchanged.
std::string sanitize_utf8(std::string_view in);

// Length in bytes of the (valid) UTF-8 sequence starting with byte c; 1 for stray bytes.
inline int utf8_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xE) return 3;
  if ((c >> 3) == 0x1E) return 4;
  return 1;
}

void append_utf8(std::string& out, uint32_t cp);
// Decode one code point from valid UTF-8 at s[i], advancing i.
uint32_t next_codepoint(std::string_view s, size_t& i);

// GPT-2 byte-level encoding: every byte maps to one printable code point (bytes 33..126,
// 161..172, 174..255 map to themselves; the rest to 256, 257, ... in byte order).
uint32_t byte_to_unicode(uint8_t b);
// Inverse; returns -1 for code points that are not in the map.
int unicode_to_byte(uint32_t cp);
// Bytes -> byte-level string, and back (characters outside the map are kept as UTF-8).
std::string bytes_to_bpe_text(std::string_view bytes);
std::string bpe_text_to_bytes(std::string_view text);

}  // namespace bw24::tokenizer
