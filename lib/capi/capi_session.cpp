// Session exports: create/destroy, prefill, decode, logits, rewind, cancel, errmsg.
#include "lib/capi/shim.h"

using namespace bw24;
using capi::finish;
using capi::guarded;

namespace {

bw24_session_params session_defaults() {
  bw24_session_params p{};
  p.struct_size = sizeof p;
  p.kv_type_k = BW24_KV_AUTO;
  p.kv_type_v = BW24_KV_AUTO;
  p.seed = 0x5eed;
  return p;
}

bw24_sampling sampling_defaults() {
  bw24_sampling p{};
  p.struct_size = sizeof p;
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.repeat_penalty = 1.0f;
  p.penalty_last_n = 64;
  p.seed = BW24_SEED_KEEP;
  return p;
}

const char kNullSession[] = "session is NULL";

}  // namespace

extern "C" {

bw24_status bw24_session_params_default(bw24_session_params* p, uint32_t struct_size) {
  return capi::write_struct(p, struct_size, session_defaults());
}

bw24_status bw24_sampling_default(bw24_sampling* p, uint32_t struct_size) {
  return capi::write_struct(p, struct_size, sampling_defaults());
}

bw24_status bw24_session_create(bw24_model* model, const bw24_session_params* params,
                                bw24_session** out, bw24_errbuf* err) {
  if (out) *out = nullptr;
  absl::Status st = guarded([&]() -> absl::Status {
    if (!model) return make_status(Code::kInvalidArgument, "model is NULL");
    if (!out) return make_status(Code::kInvalidArgument, "out is NULL");
    bw24_session_params p = session_defaults();
    BW24_RETURN_IF_ERROR(capi::read_params(params, &p, "bw24_session_params"));
    if (p.flags != 0 || p.reserved0 != 0)
      return make_status(Code::kInvalidArgument, "bw24_session_params.flags/reserved0 must be 0");
    engine::SessionOptions opt;
    opt.n_ctx = p.n_ctx;
    opt.kv_type_k = p.kv_type_k;
    opt.kv_type_v = p.kv_type_v;
    opt.seed = p.seed;
    BW24_ASSIGN_OR_RETURN(auto session, engine::Session::create(model->model, opt));
    *out = new bw24_session{std::move(session), {}};
    return absl::OkStatus();
  });
  return finish(st, err);
}

void bw24_session_destroy(bw24_session* session) { delete session; }

bw24_status bw24_session_prefill(bw24_session* session, const int32_t* tokens, int32_t n_tokens,
                                 uint32_t flags) {
  if (!session) return BW24_ERR_INVALID_ARGUMENT;
  return finish(guarded([&]() -> absl::Status {
                  if (!tokens) return make_status(Code::kInvalidArgument, "tokens is NULL");
                  if (flags & ~BW24_PREFILL_ALL_LOGITS)
                    return error(Code::kInvalidArgument, "unknown prefill flags 0x{:x}", flags);
                  return session->session->prefill(tokens, n_tokens, flags & BW24_PREFILL_ALL_LOGITS);
                }),
                session);
}

bw24_status bw24_session_logits(bw24_session* session, const float** out, int32_t* n_rows,
                                int32_t* n_vocab) {
  if (!session) return BW24_ERR_INVALID_ARGUMENT;
  return finish(guarded([&]() -> absl::Status {
                  if (!out || !n_rows || !n_vocab)
                    return make_status(Code::kInvalidArgument, "out, n_rows and n_vocab must not be NULL");
                  return session->session->logits(out, n_rows, n_vocab);
                }),
                session);
}

bw24_status bw24_session_decode(bw24_session* session, const bw24_sampling* sampling, int32_t* out,
                                int32_t cap, int32_t* n_out, int32_t* stop_reason) {
  if (n_out) *n_out = 0;
  if (!session) return BW24_ERR_INVALID_ARGUMENT;
  return finish(guarded([&]() -> absl::Status {
                  if (!n_out) return make_status(Code::kInvalidArgument, "n_out is NULL");
                  if (!out && cap > 0) return make_status(Code::kInvalidArgument, "out is NULL");
                  bw24_sampling p = sampling_defaults();
                  BW24_RETURN_IF_ERROR(capi::read_params(sampling, &p, "bw24_sampling"));
                  if (p.flags & ~BW24_SAMPLE_IGNORE_EOG)
                    return error(Code::kInvalidArgument, "unknown sampling flags 0x{:x}", p.flags);
                  if (!(p.temperature >= 0) || !(p.top_p > 0 && p.top_p <= 1) ||
                      !(p.min_p >= 0 && p.min_p <= 1) || !(p.repeat_penalty > 0) || p.top_k < 0)
                    return make_status(Code::kInvalidArgument,
                                       "sampling values out of range (temperature >= 0, 0 < top_p <= 1, "
                                       "0 <= min_p <= 1, repeat_penalty > 0, top_k >= 0)");
                  sampling::Params sp;
                  sp.temperature = p.temperature;
                  sp.top_k = p.top_k;
                  sp.top_p = p.top_p;
                  sp.min_p = p.min_p;
                  sp.repeat_penalty = p.repeat_penalty;
                  sp.presence_penalty = p.presence_penalty;
                  sp.frequency_penalty = p.frequency_penalty;
                  sp.penalty_last_n = p.penalty_last_n;
                  std::optional<uint64_t> reseed;
                  if (p.seed != BW24_SEED_KEEP) reseed = p.seed;
                  engine::DecodeResult r;
                  absl::Status st = session->session->decode(sp, reseed, p.flags & BW24_SAMPLE_IGNORE_EOG,
                                                             out, cap, &r);
                  *n_out = r.n_tokens;
                  if (stop_reason) *stop_reason = static_cast<int32_t>(r.stop);
                  return st;
                }),
                session);
}

bw24_status bw24_session_rewind(bw24_session* session, int32_t n_keep) {
  if (!session) return BW24_ERR_INVALID_ARGUMENT;
  return finish(guarded([&] { return session->session->rewind(n_keep); }), session);
}

int32_t bw24_session_position(const bw24_session* session) {
  return session ? session->session->position() : -1;
}

void bw24_session_cancel(bw24_session* session) {
  if (session) session->session->cancel();
}

const char* bw24_session_errmsg(const bw24_session* session) {
  return session ? session->errmsg.c_str() : kNullSession;
}

}  // extern "C"
