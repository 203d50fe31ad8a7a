// Model exports: params, open/close, info, metadata.
#include "lib/capi/shim.h"

using namespace bw24;
using capi::finish;
using capi::guarded;

namespace {

bw24_model_params model_defaults() {
  bw24_model_params p{};
  p.struct_size = sizeof p;
  p.device = -1;
  return p;
}

}  // namespace

using capi::copy_out;

extern "C" {

bw24_status bw24_model_params_default(bw24_model_params* p, uint32_t struct_size) {
  return capi::write_struct(p, struct_size, model_defaults());
}

bw24_status bw24_model_open(const char* path, const bw24_model_params* params, bw24_model** out,
                            bw24_errbuf* err) {
  if (out) *out = nullptr;
  absl::Status st = guarded([&]() -> absl::Status {
    if (!path) return make_status(Code::kInvalidArgument, "path is NULL");
    if (!out) return make_status(Code::kInvalidArgument, "out is NULL");
    bw24_model_params p = model_defaults();
    engine::ModelOptions opt;
    BW24_RETURN_IF_ERROR(capi::read_params(params, &p, "bw24_model_params"));
    if (p.flags & ~BW24_MODEL_VOCAB_ONLY)
      return error(Code::kInvalidArgument, "bw24_model_params.flags 0x{:x} has unknown bits", p.flags);
    opt.vocab_only = (p.flags & BW24_MODEL_VOCAB_ONLY) != 0;
    opt.device = p.device;
    opt.n_threads = p.n_threads;
    opt.vram_budget_bytes = p.vram_budget_bytes;
    if (p.progress) {
      bw24_progress_fn fn = p.progress;
      void* user = p.progress_user;
      opt.progress = [fn, user](float f) { return fn(f, user) == 0; };
    }
    if (p.options) opt.options = p.options;
    BW24_ASSIGN_OR_RETURN(auto model, engine::Model::open(path, opt));
    *out = new bw24_model{std::move(model)};
    return absl::OkStatus();
  });
  return finish(st, err);
}

void bw24_model_close(bw24_model* model) { delete model; }

bw24_status bw24_model_get_info(const bw24_model* model, bw24_model_info* info) {
  if (!model || !info) return BW24_ERR_INVALID_ARGUMENT;
  const engine::Model& m = *model->model;
  bw24_model_info full{};
  full.struct_size = sizeof full;
  full.n_vocab = m.n_vocab();
  full.n_ctx_train = m.graph().n_ctx_train;
  full.n_layer = static_cast<int32_t>(m.graph().layers.size());
  full.n_embd = m.graph().n_embd;
  full.device = m.options().device;
  full.n_params = m.n_params();
  full.n_bytes = m.n_bytes();
  full.arch = m.graph().arch.c_str();
  full.name = m.name().c_str();
  full.quant = m.quant().c_str();
  return capi::write_struct(info, info->struct_size, full);
}

int32_t bw24_model_meta_count(const bw24_model* model) {
  if (!model) return -1;
  return static_cast<int32_t>(model->model->dir().meta_entries().size());
}

bw24_status bw24_model_meta_key(const bw24_model* model, int32_t i, char* buf, size_t cap,
                                size_t* n_out) {
  if (!model) return BW24_ERR_INVALID_ARGUMENT;
  const auto& entries = model->model->dir().meta_entries();
  if (i < 0 || static_cast<size_t>(i) >= entries.size()) return BW24_ERR_NOT_FOUND;
  try {
    return copy_out(entries[static_cast<size_t>(i)].first, buf, cap, n_out);
  } catch (...) {
    return BW24_ERR_OUT_OF_MEMORY;
  }
}

bw24_status bw24_model_meta(const bw24_model* model, const char* key, char* buf, size_t cap,
                            size_t* n_out) {
  if (!model || !key) return BW24_ERR_INVALID_ARGUMENT;
  const loaders::MetaValue* v = model->model->dir().meta(key);
  if (!v) return BW24_ERR_NOT_FOUND;
  try {
    return copy_out(v->to_text(), buf, cap, n_out);
  } catch (...) {
    return BW24_ERR_OUT_OF_MEMORY;
  }
}

}  // extern "C"
