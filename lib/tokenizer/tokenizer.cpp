#include "lib/tokenizer/tokenizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <queue>

#include "lib/core/status.h"
#include "lib/tokenizer/unicode.h"

namespace bw24::tokenizer {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// A doubly linked list of symbols over one word; merging marks the right symbol empty.
struct Symbol {
  int prev, next;
  size_t start, len;
};

std::vector<Symbol> split_chars(const std::string& s) {
  std::vector<Symbol> syms;
  for (size_t i = 0; i < s.size();) {
    size_t len = std::min<size_t>(static_cast<size_t>(utf8_len(static_cast<unsigned char>(s[i]))), s.size() - i);
    int idx = static_cast<int>(syms.size());
    syms.push_back({idx - 1, -1, i, len});
    if (idx > 0) syms[static_cast<size_t>(idx - 1)].next = idx;
    i += len;
  }
  return syms;
}

std::string nfc(std::string_view s) {
  std::string in(s);
  utf8proc_uint8_t* out = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(in.c_str()));
  if (!out) return in;
  std::string r(reinterpret_cast<char*>(out));
  std::free(out);
  return r;
}

// The merge loop both algorithms share: repeatedly merge the adjacent pair with the lowest
// priority (leftmost on ties) until no pair merges. priority(l, r) gives std::nullopt for pairs that
// do not merge. Stale queue entries (a side already merged elsewhere) are skipped.
template <typename PriorityFn>
void merge_pairs(std::vector<Symbol>& syms, PriorityFn priority) {
  struct Candidate {
    int left, right;
    double priority;
    size_t len;
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.priority > b.priority || (a.priority == b.priority && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    if (std::optional<double> p = priority(l, r))
      queue.push({l, r, *p, syms[static_cast<size_t>(l)].len + syms[static_cast<size_t>(r)].len});
  };
  for (size_t i = 1; i < syms.size(); ++i) try_add(static_cast<int>(i - 1), static_cast<int>(i));
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol &a = syms[static_cast<size_t>(c.left)], &b = syms[static_cast<size_t>(c.right)];
    if (a.len == 0 || b.len == 0 || a.len + b.len != c.len || a.next != c.right) continue;  // stale
    a.len += b.len;
    b.len = 0;
    a.next = b.next;
    if (b.next >= 0) syms[static_cast<size_t>(b.next)].prev = c.left;
    try_add(a.prev, c.left);
    try_add(c.left, a.next);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::create(Vocab vocab) {
  std::unique_ptr<Tokenizer> t(new Tokenizer(std::move(vocab)));
  if (t->vocab_.kind == VocabKind::kBpe) {
    if (!t->vocab_.pre_patterns.empty()) {
      BW24_ASSIGN_OR_RETURN(t->pre_, PreTokenizer::from_patterns(t->vocab_.pre_patterns));
    } else {
      BW24_ASSIGN_OR_RETURN(t->pre_, PreTokenizer::create(t->vocab_.pre));
    }
  }
  return t;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::create(const loaders::TensorDirectory& dir) {
  BW24_ASSIGN_OR_RETURN(Vocab v, load_vocab(dir));
  return create(std::move(v));
}

// SentencePiece BPE: start from characters, repeatedly merge the adjacent pair whose
// concatenation is the highest-scoring vocabulary entry (leftmost on ties); characters that
// never became a token fall back to <0xXX> byte tokens.
void Tokenizer::encode_spm(const std::string& text, std::vector<int32_t>& out) const {
  std::vector<Symbol> syms = split_chars(text);
  std::map<std::string, std::pair<int, int>, std::less<>> rev_merge;  // merged text -> its halves
  merge_pairs(syms, [&](int l, int r) -> std::optional<double> {
    const Symbol &a = syms[static_cast<size_t>(l)], &b = syms[static_cast<size_t>(r)];
    std::string merged = text.substr(a.start, a.len + b.len);
    int32_t id = vocab_.find(merged);
    if (id < 0) return std::nullopt;
    rev_merge[merged] = {l, r};
    return -static_cast<double>(vocab_.score[static_cast<size_t>(id)]);  // highest score first
  });
  // A merged symbol is always a vocabulary entry; unmatched single characters become bytes.
  std::function<void(const Symbol&)> emit = [&](const Symbol& s) {
    std::string piece = text.substr(s.start, s.len);
    int32_t id = vocab_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
    if (auto it = rev_merge.find(piece); it != rev_merge.end()) {
      emit(syms[static_cast<size_t>(it->second.first)]);
      emit(syms[static_cast<size_t>(it->second.second)]);
      return;
    }
    for (unsigned char c : piece) {
      int32_t b = vocab_.byte_token[c];
      if (b >= 0) out.push_back(b);
      else if (vocab_.unk >= 0) out.push_back(vocab_.unk);
    }
  };
  if (syms.empty()) return;
  for (int i = 0; i != -1; i = syms[static_cast<size_t>(i)].next) emit(syms[static_cast<size_t>(i)]);
}

// Byte-level BPE on one pre-tokenized word (already mapped to GPT-2's printable code points):
// merge the adjacent pair with the lowest merge rank until none applies.
void Tokenizer::bpe_word(const std::string& word, std::vector<int32_t>& out) const {
  if (vocab_.ignore_merges) {
    if (int32_t id = vocab_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> syms = split_chars(word);
  std::string key;
  merge_pairs(syms, [&](int l, int r) -> std::optional<double> {
    const Symbol &a = syms[static_cast<size_t>(l)], &b = syms[static_cast<size_t>(r)];
    key.assign(word, a.start, a.len);
    key += ' ';
    key.append(word, b.start, b.len);
    auto it = vocab_.merge_rank.find(key);
    if (it == vocab_.merge_rank.end()) return std::nullopt;
    return static_cast<double>(it->second);  // lowest rank first
  });
  for (int i = syms.empty() ? -1 : 0; i != -1; i = syms[static_cast<size_t>(i)].next) {
    const Symbol& s = syms[static_cast<size_t>(i)];
    int32_t id = vocab_.find(word.substr(s.start, s.len));
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    // Not a token (a vocabulary without every byte): emit what each character maps to.
    for (size_t k = s.start; k < s.start + s.len;) {
      size_t len = static_cast<size_t>(utf8_len(static_cast<unsigned char>(word[k])));
      int32_t cid = vocab_.find(word.substr(k, len));
      if (cid >= 0) out.push_back(cid);
      else if (vocab_.unk >= 0) out.push_back(vocab_.unk);
      k += len;
    }
  }
}

void Tokenizer::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  for (std::string_view piece : pre_->split(text)) bpe_word(bytes_to_bpe_text(piece), out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view raw, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos) out.push_back(vocab_.bos);
  const std::string text = sanitize_utf8(raw);
  // Fragments: special tokens matched leftmost-longest, text in between.
  struct Fragment {
    size_t start, len;
    int32_t token;  // -1: text
  };
  std::vector<Fragment> frags;
  size_t text_start = 0;
  for (size_t i = 0; i < text.size();) {
    int32_t hit = -1;
    for (int32_t id : vocab_.specials_by_byte[static_cast<unsigned char>(text[i])]) {  // longest first
      const std::string& s = vocab_.text[static_cast<size_t>(id)];
      if (!parse_special && vocab_.type[static_cast<size_t>(id)] == TokenType::kControl) continue;
      if (text.compare(i, s.size(), s) == 0) {
        hit = id;
        break;
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > text_start) frags.push_back({text_start, i - text_start, -1});
    frags.push_back({i, 0, hit});
    i += vocab_.text[static_cast<size_t>(hit)].size();
    text_start = i;
  }
  if (text_start < text.size()) frags.push_back({text_start, text.size() - text_start, -1});

  bool prev_special = true;  // SentencePiece's dummy prefix goes at the start and after specials
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    std::string frag = text.substr(f.start, f.len);
    if (vocab_.nfc) frag = nfc(frag);
    if (vocab_.kind == VocabKind::kSpm) {
      std::string s;
      if (vocab_.add_space_prefix && prev_special) s = kSpmSpace;
      for (char c : frag) {
        if (c == ' ') s += kSpmSpace;
        else s += c;
      }
      encode_spm(s, out);
    } else {
      encode_bpe(frag, out);
    }
    prev_special = false;
  }
  if (add_special && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= vocab_.n_tokens()) return "";
  const std::string& t = vocab_.text[static_cast<size_t>(id)];
  switch (vocab_.type[static_cast<size_t>(id)]) {
    case TokenType::kControl:
      return render_special ? t : "";
    case TokenType::kUserDefined:
      return t;
    case TokenType::kUnknown:
      return render_special ? t : "\xE2\x96\x85";  // U+2585, as llama.cpp renders <unk>
    case TokenType::kByte:
      if (t.size() == 6 && t.rfind("<0x", 0) == 0) return std::string(1, static_cast<char>(std::strtol(t.c_str() + 3, nullptr, 16)));
      return t;
    default:
      break;
  }
  if (vocab_.kind == VocabKind::kBpe) return bpe_text_to_bytes(t);
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
      out += ' ';
      i += kSpmSpace.size();
    } else {
      out += t[i++];
    }
  }
  return out;
}

std::string Tokenizer::decode(const int32_t* ids, size_t n, bool render_special, bool keep_space_prefix) const {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    std::string piece = token_to_piece(ids[i], render_special);
    // SentencePiece drops the dummy prefix of the first text token.
    if (i == 0 && !keep_space_prefix && vocab_.kind == VocabKind::kSpm && vocab_.add_space_prefix &&
        !piece.empty() && piece[0] == ' ' && ids[i] >= 0 && ids[i] < vocab_.n_tokens() &&
        vocab_.type[static_cast<size_t>(ids[i])] == TokenType::kNormal)
      piece.erase(0, 1);
    out += piece;
  }
  return out;
}

}  // namespace bw24::tokenizer
