// Chat prompts: render a conversation with the model's own template (tokenizer.chat_template, run
// by the Jinja subset), or with a built-in renderer per chat family when the model has no template
// or one outside the subset. The context variables are the ones transformers' apply_chat_template
// passes: messages, add_generation_prompt, bos_token, eos_token, plus caller extras (tools,
// enable_thinking, ...).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/chat/jinja_value.h"
#include "lib/tokenizer/vocab.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::chat {

struct RenderOptions {
  bool add_generation_prompt = true;
  // Template text, or the name of a built-in family ("chatml", "gemma", "phi3", "llama3").
  // Empty: the model's template, falling back to its family's built-in renderer.
  std::string template_override;
};

// context: an object with "messages" (a list of {"role", "content", ...}) and any extras.
absl::StatusOr<std::string> render(const loaders::TensorDirectory& dir, const tokenizer::Vocab* vocab,
                                   Json context, const RenderOptions& opt);

// The built-in family the vocabulary's special tokens point to ("" if none).
std::string detect_family(const tokenizer::Vocab* vocab);

}  // namespace bw24::chat
