// Chat template exports.
#include "lib/capi/shim.h"
#include "lib/chat/chat.h"

using namespace bw24;

namespace {

bw24_status render(const bw24_model* model, chat::Json ctx, uint32_t flags, const char* tmpl, char* buf,
                   size_t cap, size_t* n_out, bw24_errbuf* err) {
  std::string text;
  absl::Status st = capi::guarded([&]() -> absl::Status {
    if (flags & ~BW24_CHAT_ADD_GENERATION_PROMPT) return make_status(Code::kInvalidArgument, "unknown chat flags");
    chat::RenderOptions opt;
    opt.add_generation_prompt = flags & BW24_CHAT_ADD_GENERATION_PROMPT;
    if (tmpl) opt.template_override = tmpl;
    const tokenizer::Tokenizer* t = model->model->tokenizer();
    BW24_ASSIGN_OR_RETURN(text, chat::render(model->model->dir(), t ? &t->vocab() : nullptr, std::move(ctx), opt));
    return absl::OkStatus();
  });
  if (!st.ok()) return capi::finish(st, err);
  capi::fill_errbuf(err, 0, "");
  return capi::copy_out(text, buf, cap, n_out);
}

}  // namespace

extern "C" {

bw24_status bw24_chat_render(const bw24_model* model, const bw24_chat_message* messages, int32_t n_messages,
                             uint32_t flags, const char* template_override, char* buf, size_t cap,
                             size_t* n_out, bw24_errbuf* err) {
  if (n_out) *n_out = 0;
  if (!model || (!messages && n_messages > 0) || n_messages < 0) {
    capi::fill_errbuf(err, BW24_ERR_INVALID_ARGUMENT, "model and messages must not be NULL");
    return BW24_ERR_INVALID_ARGUMENT;
  }
  chat::Json ctx = {{"messages", chat::Json::array()}};
  for (int32_t i = 0; i < n_messages; ++i) {
    if (!messages[i].role || !messages[i].content) {
      capi::fill_errbuf(err, BW24_ERR_INVALID_ARGUMENT, "a message has a NULL role or content");
      return BW24_ERR_INVALID_ARGUMENT;
    }
    try {
      ctx["messages"].push_back({{"role", messages[i].role}, {"content", messages[i].content}});
    } catch (const std::exception&) {  // invalid UTF-8 is refused by the JSON layer
      capi::fill_errbuf(err, BW24_ERR_INVALID_ARGUMENT, "a message is not valid UTF-8");
      return BW24_ERR_INVALID_ARGUMENT;
    }
  }
  return render(model, std::move(ctx), flags, template_override, buf, cap, n_out, err);
}

bw24_status bw24_chat_render_json(const bw24_model* model, const char* context_json, uint32_t flags,
                                  const char* template_override, char* buf, size_t cap, size_t* n_out,
                                  bw24_errbuf* err) {
  if (n_out) *n_out = 0;
  if (!model || !context_json) {
    capi::fill_errbuf(err, BW24_ERR_INVALID_ARGUMENT, "model and context_json must not be NULL");
    return BW24_ERR_INVALID_ARGUMENT;
  }
  chat::Json ctx = chat::Json::parse(context_json, nullptr, false);
  if (ctx.is_discarded()) {
    capi::fill_errbuf(err, BW24_ERR_INVALID_ARGUMENT, "context_json is not valid JSON");
    return BW24_ERR_INVALID_ARGUMENT;
  }
  return render(model, std::move(ctx), flags, template_override, buf, cap, n_out, err);
}

}  // extern "C"
