#include "lib/tokenizer/unicode.h"

#include <array>

namespace bw24::tokenizer {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string sanitize_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  const size_t n = in.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // Expected length and the allowed range of the second byte (Unicode Table 3-7).
    int len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) { len = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) { len = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) { len = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) { len = 4; hi = 0x8F; }
    if (len == 0) {  // never valid as a lead byte
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    size_t k = 1;
    bool ok = true;
    for (; k < static_cast<size_t>(len); ++k) {
      if (i + k >= n) { ok = false; break; }
      unsigned char b = s[i + k];
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (b < l || b > h) { ok = false; break; }
    }
    if (ok) {
      out.append(reinterpret_cast<const char*>(s + i), static_cast<size_t>(len));
      i += static_cast<size_t>(len);
    } else {
      out += "\xEF\xBF\xBD";  // the maximal valid prefix (k bytes) becomes one U+FFFD
      i += k;
    }
  }
  return out;
}

uint32_t next_codepoint(std::string_view s, size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  int len = utf8_len(c);
  if (i + static_cast<size_t>(len) > s.size()) len = 1;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += static_cast<size_t>(len);
  return cp;
}

namespace {
struct ByteMap {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> to_byte{};
  ByteMap() {
    to_byte.fill(-1);
    uint32_t extra = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      to_cp[b] = printable ? static_cast<uint32_t>(b) : extra++;
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}
}  // namespace

uint32_t byte_to_unicode(uint8_t b) { return byte_map().to_cp[b]; }

int unicode_to_byte(uint32_t cp) { return cp < 512 ? byte_map().to_byte[cp] : -1; }

std::string bytes_to_bpe_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(out, byte_to_unicode(static_cast<uint8_t>(c)));
  return out;
}

std::string bpe_text_to_bytes(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    uint32_t cp = next_codepoint(text, i);
    int b = unicode_to_byte(cp);
    if (b >= 0) out += static_cast<char>(b);
    else out.append(text.substr(start, i - start));
  }
  return out;
}

}  // namespace bw24::tokenizer
