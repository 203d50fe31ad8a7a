#include "lib/chat/chat.h"

#include <map>
#include <memory>
#include <mutex>

#include "lib/chat/jinja.h"
#include "lib/core/log.h"
#include "lib/core/status.h"

namespace bw24::chat {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r\v\f"), e = s.find_last_not_of(" \t\n\r\v\f");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string text_of(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;  // a list of parts: the text parts, concatenated
  if (content.is_array())
    for (const Json& p : content)
      if (p.is_object() && p.value("type", "") == "text") out += p.value("text", "");
  return out;
}

// Built-in renderers: the formats of each family's official template for plain role/content
// conversations (tests check them against the real templates).
absl::StatusOr<std::string> render_builtin(const std::string& family, const Json& ctx, bool add_gen) {
  const Json& msgs = ctx["messages"];
  std::string bos = ctx.value("bos_token", ""), out;
  if (family == "chatml") {
    for (const Json& m : msgs)
      out += "<|im_start|>" + m.value("role", "") + "\n" + text_of(m.value("content", Json(""))) + "<|im_end|>\n";
    if (add_gen) out += "<|im_start|>assistant\n";
    return out;
  }
  if (family == "gemma") {
    out = bos;
    std::string prefix;
    size_t start = 0;
    if (!msgs.empty() && msgs[0].value("role", "") == "system") {
      prefix = text_of(msgs[0].value("content", Json(""))) + "\n\n";
      start = 1;
    }
    for (size_t i = start; i < msgs.size(); ++i) {
      std::string role = msgs[i].value("role", "");
      if ((role == "user") != ((i - start) % 2 == 0))
        return error(Code::kInvalidArgument, "Conversation roles must alternate user/assistant/user/assistant/...");
      out += "<start_of_turn>" + std::string(role == "assistant" ? "model" : role) + "\n" +
             (i == start ? prefix : "") + trim(text_of(msgs[i].value("content", Json("")))) + "<end_of_turn>\n";
    }
    if (add_gen) out += "<start_of_turn>model\n";
    return out;
  }
  if (family == "phi3") {
    out = bos;
    for (const Json& m : msgs) {
      std::string role = m.value("role", ""), c = text_of(m.value("content", Json("")));
      if (role == "user") out += "<|user|>\n" + c + "<|end|>\n<|assistant|>\n";
      else if (role == "assistant") out += c + "<|end|>\n";
      // Phi-3's template drops every other role (system prompts included).
    }
    return out;
  }
  if (family == "llama3") {
    out = bos;
    for (const Json& m : msgs)
      out += "<|start_header_id|>" + m.value("role", "") + "<|end_header_id|>\n\n" +
             trim(text_of(m.value("content", Json("")))) + "<|eot_id|>";
    if (add_gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
  }
  return error(Code::kUnsupported, "unknown built-in chat format '{}' (chatml, gemma, phi3, llama3)", family);
}

// Parsed templates are cached by text: parsing Qwen3's takes longer than rendering it.
absl::StatusOr<std::shared_ptr<const Template>> cached_parse(const std::string& src) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Template>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(src); it != cache.end()) return it->second;
  BW24_ASSIGN_OR_RETURN(auto t, Template::parse(src));
  if (cache.size() > 16) cache.clear();
  cache[src] = t;
  return t;
}

}  // namespace

std::string detect_family(const tokenizer::Vocab* v) {
  if (!v) return "";
  if (v->find("<|im_start|>") >= 0) return "chatml";
  if (v->find("<start_of_turn>") >= 0) return "gemma";
  if (v->find("<|start_header_id|>") >= 0) return "llama3";
  if (v->find("<|user|>") >= 0 && v->find("<|assistant|>") >= 0) return "phi3";
  return "";
}

absl::StatusOr<std::string> render(const loaders::TensorDirectory& dir, const tokenizer::Vocab* vocab,
                                   Json ctx, const RenderOptions& opt) {
  if (!ctx.is_object() || !ctx.contains("messages") || !ctx["messages"].is_array())
    return error(Code::kInvalidArgument, "chat context needs a \"messages\" list");
  for (const Json& m : ctx["messages"])
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return error(Code::kInvalidArgument, "every chat message needs a string \"role\"");
  ctx["add_generation_prompt"] = opt.add_generation_prompt;
  if (vocab) {
    if (!ctx.contains("bos_token")) ctx["bos_token"] = vocab->bos >= 0 ? vocab->text[static_cast<size_t>(vocab->bos)] : "";
    if (!ctx.contains("eos_token")) ctx["eos_token"] = vocab->eos >= 0 ? vocab->text[static_cast<size_t>(vocab->eos)] : "";
  }
  static const char* kFamilies[] = {"chatml", "gemma", "phi3", "llama3"};
  for (const char* f : kFamilies)
    if (opt.template_override == f) return render_builtin(f, ctx, opt.add_generation_prompt);

  std::string src = opt.template_override;
  if (src.empty())
    if (const loaders::MetaValue* t = dir.meta("tokenizer.chat_template"); t && t->type == loaders::MetaType::STRING)
      src = t->s;
  std::string family = detect_family(vocab);
  if (src.empty()) {
    if (family.empty()) return error(Code::kUnsupported, "the model has no chat template and no known chat format");
    return render_builtin(family, ctx, opt.add_generation_prompt);
  }
  auto tmpl = cached_parse(src);
  if (!tmpl.ok()) {
    if (!opt.template_override.empty() || family.empty()) return tmpl.status();
    log(LogLevel::kWarn, "{}; using the built-in '{}' format instead", message_of(tmpl.status()), family);
    return render_builtin(family, ctx, opt.add_generation_prompt);
  }
  return (*tmpl)->render(ctx);
}

}  // namespace bw24::chat
