#include "loaders/safetensors/hf_tokenizer.h"

#include <filesystem>
#include <map>

#include "lib/core/mapped_file.h"
#include "lib/core/status.h"
#include "nlohmann/json.hpp"

namespace bw24::loaders {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

absl::StatusOr<json> read_json(const fs::path& p) {
  BW24_ASSIGN_OR_RETURN(auto f, MappedFile::open(p.string()));
  const char* b = reinterpret_cast<const char*>(f->data());
  json j = json::parse(b, b + f->size(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return error(Code::kFormat, "'{}' is not a JSON object", p.string());
  return j;
}

// The regexes of a pre_tokenizer that bw24 can run: Split(Regex, Isolated) and Digits steps
// followed by ByteLevel(use_regex=false), or a lone ByteLevel(use_regex=true) (GPT-2's pattern).
absl::Status pre_patterns(const json& pre, std::vector<std::string>* out) {
  if (!pre.is_object() || !pre.contains("type")) return error(Code::kUnsupported, "tokenizer.json has no pre_tokenizer");
  std::string type = pre["type"].get<std::string>();
  if (type == "Sequence") {
    for (const json& p : pre.value("pretokenizers", json::array())) BW24_RETURN_IF_ERROR(pre_patterns(p, out));
    return absl::OkStatus();
  }
  if (type == "Split") {
    const json& pat = pre.value("pattern", json::object());
    if (!pat.contains("Regex") || pre.value("behavior", "") != "Isolated" || pre.value("invert", false))
      return error(Code::kUnsupported, "tokenizer.json Split pre-tokenizer {} is not supported", pre.dump());
    out->push_back(pat["Regex"].get<std::string>());
    return absl::OkStatus();
  }
  if (type == "Digits") {
    out->push_back(pre.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
    return absl::OkStatus();
  }
  if (type == "ByteLevel") {
    if (pre.value("add_prefix_space", false))
      return error(Code::kUnsupported, "ByteLevel pre-tokenizer with add_prefix_space is not supported");
    if (pre.value("use_regex", true)) out->push_back(kGpt2Pattern);
    return absl::OkStatus();
  }
  return error(Code::kUnsupported, "tokenizer.json pre-tokenizer type '{}' is not supported", type);
}

std::string token_content(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

absl::Status load(const fs::path& dir, TensorDirectory* out) {
  BW24_ASSIGN_OR_RETURN(json tj, read_json(dir / "tokenizer.json"));
  const json& model = tj.value("model", json::object());
  if (model.value("type", "") != "BPE")
    return error(Code::kUnsupported, "tokenizer.json model type '{}' is not supported (BPE is)", model.value("type", "?"));
  if (model.value("byte_fallback", false))
    return error(Code::kUnsupported, "tokenizer.json BPE with byte_fallback (SentencePiece-style) is not supported yet");
  // Vocabulary: model.vocab plus added_tokens, indexed by id.
  std::map<int64_t, std::pair<std::string, int32_t>> by_id;  // id -> (text, type)
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it)
    by_id[it.value().get<int64_t>()] = {it.key(), 1};
  for (const json& a : tj.value("added_tokens", json::array()))
    by_id[a["id"].get<int64_t>()] = {a["content"].get<std::string>(), a.value("special", false) ? 3 : 4};
  if (by_id.empty() || by_id.begin()->first < 0 || by_id.rbegin()->first > (1 << 24))
    return error(Code::kFormat, "tokenizer.json vocabulary ids are out of range");
  const size_t n = static_cast<size_t>(by_id.rbegin()->first) + 1;
  std::vector<std::string> tokens(n);
  std::vector<int32_t> types(n, 5);  // holes are unused ids
  for (size_t i = 0; i < n; ++i) tokens[i] = "[PAD" + std::to_string(i) + "]";
  for (auto& [id, tt] : by_id) {
    tokens[static_cast<size_t>(id)] = tt.first;
    types[static_cast<size_t>(id)] = tt.second;
  }
  std::vector<std::string> merges;
  for (const json& m : model.value("merges", json::array())) {
    if (m.is_string()) merges.push_back(m.get<std::string>());
    else if (m.is_array() && m.size() == 2) merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    else return error(Code::kFormat, "tokenizer.json merge entry {} is neither \"a b\" nor [a, b]", m.dump());
  }
  std::vector<std::string> patterns;
  BW24_RETURN_IF_ERROR(pre_patterns(tj.value("pre_tokenizer", json::object()), &patterns));
  const json& norm = tj.value("normalizer", json());
  if (!norm.is_null()) {
    if (norm.value("type", "") != "NFC")
      return error(Code::kUnsupported, "tokenizer.json normalizer {} is not supported (NFC is)", norm.dump());
    BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.bw24.normalizer", MetaValue::of_string("nfc")));
  }
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.model", MetaValue::of_string("gpt2")));
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.pre", MetaValue::of_string("hf-tokenizer-json")));
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.bw24.pre_patterns", MetaValue::of_strings(patterns)));
  if (model.value("ignore_merges", false))
    BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.bw24.ignore_merges", MetaValue::of_bool(true)));
  std::map<std::string, int32_t> to_id;
  for (size_t i = 0; i < n; ++i) to_id.emplace(tokens[i], static_cast<int32_t>(i));
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.tokens", MetaValue::of_strings(std::move(tokens))));
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.token_type", MetaValue::of_i32s(types)));
  BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.merges", MetaValue::of_strings(std::move(merges))));

  // Special tokens and the chat template from tokenizer_config.json.
  std::error_code ec;
  if (fs::exists(dir / "tokenizer_config.json", ec)) {
    BW24_ASSIGN_OR_RETURN(json tc, read_json(dir / "tokenizer_config.json"));
    for (auto [hf, gg] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                          std::pair{"eos_token", "tokenizer.ggml.eos_token_id"},
                          std::pair{"pad_token", "tokenizer.ggml.padding_token_id"},
                          std::pair{"unk_token", "tokenizer.ggml.unknown_token_id"}}) {
      auto it = to_id.find(token_content(tc.value(hf, json())));
      if (it != to_id.end() && !out->meta(gg))
        BW24_RETURN_IF_ERROR(out->add_meta(gg, MetaValue::of_u32(static_cast<uint32_t>(it->second))));
    }
    for (auto [hf, gg] : {std::pair{"add_bos_token", "tokenizer.ggml.add_bos_token"},
                          std::pair{"add_eos_token", "tokenizer.ggml.add_eos_token"}})
      if (tc.contains(hf) && tc[hf].is_boolean() && !out->meta(gg))
        BW24_RETURN_IF_ERROR(out->add_meta(gg, MetaValue::of_bool(tc[hf].get<bool>())));
    const json& ct = tc.value("chat_template", json());
    if (ct.is_string() && !out->meta("tokenizer.chat_template")) {
      BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.chat_template", MetaValue::of_string(ct.get<std::string>())));
    } else if (ct.is_array()) {
      for (const json& e : ct)
        if (e.is_object() && e.contains("name") && e.contains("template")) {
          std::string name = e["name"].get<std::string>();
          std::string key = name == "default" ? "tokenizer.chat_template" : "tokenizer.chat_template." + name;
          if (!out->meta(key)) BW24_RETURN_IF_ERROR(out->add_meta(key, MetaValue::of_string(e["template"].get<std::string>())));
        }
    }
  }
  if (!out->meta("tokenizer.ggml.add_bos_token"))
    BW24_RETURN_IF_ERROR(out->add_meta("tokenizer.ggml.add_bos_token", MetaValue::of_bool(false)));
  return absl::OkStatus();
}

}  // namespace

absl::Status load_hf_tokenizer(const std::string& dir, TensorDirectory* out) {
  try {
    return with_context(load(fs::path(dir), out), dir);
  } catch (const json::exception& e) {
    return error(Code::kFormat, "{}: tokenizer.json: {}", dir, e.what());
  }
}

}  // namespace bw24::loaders
