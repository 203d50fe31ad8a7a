#include "lib/tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string_view>
#include <utility>

#include "lib/core/status.h"

namespace bw24::tokenizer {
namespace {

// Patterns as the models' tokenizer.json files write them (not llama.cpp's hand-expanded
// variants): PCRE2 understands (?i:...) and \p{...} directly, which keeps Unicode case folding
// identical to the Hugging Face tokenizers library.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen35 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Named {
  std::string_view name;
  std::vector<std::string_view> patterns;
};

const std::vector<Named>& table() {
  static const std::vector<Named> t = {
      {"gpt-2", {kGpt2}},
      {"default", {kGpt2}},
      {"llama-bpe", {kLlama3}},
      {"llama3", {kLlama3}},
      {"dbrx", {kLlama3}},
      {"smaug-bpe", {kLlama3}},
      {"qwen2", {kQwen2}},
      {"deepseek-r1-qwen", {kQwen2}},
      {"stablelm2", {kQwen2}},
      {"qwen35", {kQwen35}},
      // SmolLM / StarCoder family: single digits first, then GPT-2's pattern.
      {"smollm", {R"(\p{N})", kGpt2}},
      {"starcoder", {R"(\p{N})", kGpt2}},
      {"refact", {R"(\p{N})", kGpt2}},
      {"deepseek-coder",
       {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", R"(\p{N})"}},
  };
  return t;
}

}  // namespace

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::~PreTokenizer() = default;

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::from_patterns(
    const std::vector<std::string>& patterns) {
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  for (const std::string& pat : patterns) {
    int err = 0;
    PCRE2_SIZE off = 0;
    auto r = std::make_unique<Regex>();
    r->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.data()), pat.size(), PCRE2_UTF | PCRE2_UCP,
                            &err, &off, nullptr);
    if (!r->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      return error(Code::kUnsupported, "pre-tokenizer regex does not compile at offset {}: {}", off,
                   reinterpret_cast<char*>(msg));
    }
    pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT fails
    p->regexes_.push_back(std::move(r));
  }
  return p;
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::create(const std::string& name) {
  std::string known;
  for (const Named& n : table()) {
    if (n.name == name) return from_patterns(std::vector<std::string>(n.patterns.begin(), n.patterns.end()));
    known += known.empty() ? "" : ", ";
    known += n.name;
  }
  return error(Code::kUnsupported, "pre-tokenizer '{}' is not supported (known: {})", name, known);
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces{text};
  if (text.empty()) return {};
  for (const auto& re : regexes_) {
    std::vector<std::string_view> next;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re->code, nullptr);
    for (std::string_view piece : pieces) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t offset = 0, last_end = 0;
      while (offset <= piece.size()) {
        int rc = pcre2_match(re->code, subject, piece.size(), offset, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        size_t s = ov[0], e = ov[1];
        if (e == s) {  // empty match: step over one character
          if (s >= piece.size()) break;
          offset = s + 1;
          while (offset < piece.size() && (static_cast<unsigned char>(piece[offset]) & 0xC0) == 0x80) ++offset;
          continue;
        }
        if (s > last_end) next.push_back(piece.substr(last_end, s - last_end));
        next.push_back(piece.substr(s, e - s));
        last_end = offset = e;
      }
      if (last_end < piece.size()) next.push_back(piece.substr(last_end));
    }
    pcre2_match_data_free(md);
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace bw24::tokenizer
