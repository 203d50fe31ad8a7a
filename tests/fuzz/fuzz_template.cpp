// libFuzzer target: the chat-template engine parses and renders arbitrary template text against a
// fixed conversation. Any input must give a template or a status: no crash, hang or blow-up.
#include <cstddef>
#include <cstdint>

#include "lib/chat/jinja.h"

extern "C" int bw24_fuzz_template(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Hi <b>there</b>\n"},
                 {"role": "assistant", "content": "<think>\nhm\n</think>\n\nHello!",
                  "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1, "b": [true, null, 2.5]}}}]},
                 {"role": "tool", "content": "{\"ok\": 1}"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false})");
  std::string src(reinterpret_cast<const char*>(data), size);
  auto t = bw24::chat::Template::parse(src);
  if (t.ok()) (void)(*t)->render(ctx);
  return 0;
}

#ifdef BW24_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return bw24_fuzz_template(data, size); }
#endif
