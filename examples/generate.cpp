// bw24-generate: one prompt in, tokens out. Uses only the public C API (include/bw24.h), plus
// nlohmann-json to write the --json line.
//
//   bw24-generate -m PATH (-p TEXT | --prompt-ids 1,2,3) [-n N] [--temp T] [--top-k K]
//                 [--top-p P] [--min-p P] [--seed S] [--device cpu|cuda[:N]] [--ctx N]
//                 [--kv TYPE] [--kv-k TYPE] [--kv-v TYPE] [--json] [--dump-logits FILE] [--chat]
//                 [--tokenize-only] [--option KEY=VALUE]
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bw24.h"
#include "examples/example_util.h"
#include "nlohmann/json.hpp"

namespace {

using bw24_example::complete_utf8_prefix;
using bw24_example::parse_device;
using bw24_example::parse_kv_arg;
using bw24_example::parse_sampling_arg;

void usage(FILE* f) {
  std::fprintf(f,
      "usage: bw24-generate -m PATH (-p TEXT | --prompt-ids 1,2,3) [options]\n"
      "  -m PATH              a .gguf file or a Hugging Face model directory\n"
      "  -p TEXT              prompt text, tokenized by the model's tokenizer (BOS added if the\n"
      "                       model asks for it; special tokens such as <|im_start|> parsed)\n"
      "  --prompt-ids LIST    comma-separated token ids, used exactly as given (no BOS added)\n"
      "  -n N                 tokens to generate (default 32)\n"
      "  --temp T             temperature, 0 = greedy (default 0)\n"
      "  --top-k K            (default 0 = off)\n"
      "  --top-p P            (default 1 = off)\n"
      "  --min-p P            (default 0 = off)\n"
      "  --seed S             sampler seed (default 1234)\n"
      "  --device DEV         cpu (default) or cuda[:N]\n"
      "  --ctx N              context positions (default: min(training context, 4096))\n"
      "  --kv TYPE            KV cache type of K and V: f32, f16, bf16, q8_0, q4_0, fp8_e4m3\n"
      "                       (default: f32 on the CPU, f16 on CUDA)\n"
      "  --kv-k TYPE, --kv-v TYPE  the K or the V cache alone\n"
      "  --option KEY=VALUE   a model option (docs/abi.md: prefault, cuda_graph, kv_rotate); repeatable;\n"
      "                       kv_rotate=1 keeps a q4_0 / q8_0 cache close to f16 (CPU reference for now)\n"
      "  --json               print one JSON line with ids, text and speeds\n"
      "  --dump-logits FILE   write the prefill logits of every prompt position as float32\n"
      "                       [n_prompt][n_vocab], little-endian\n"
      "  --chat               wrap -p TEXT as one user turn of the model's chat template\n"
      "  --tokenize-only      print the prompt's ids (with --json: {\"ids\":[...]}) and exit;\n"
      "                       works on vocab-only GGUFs\n");
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

bool parse_ids(const char* s, std::vector<int32_t>* out) {
  while (*s) {
    char* end;
    long v = std::strtol(s, &end, 10);
    if (end == s || v < INT32_MIN || v > INT32_MAX) return false;
    out->push_back(static_cast<int32_t>(v));
    s = end;
    if (*s == ',') ++s;
    else if (*s) return false;
  }
  return !out->empty();
}

std::string detokenize(const bw24_model* model, const std::vector<int32_t>& ids) {
  size_t need = 0;
  if (bw24_detokenize(model, ids.data(), static_cast<int32_t>(ids.size()), 0, nullptr, 0, &need) !=
      BW24_ERR_BUFFER_TOO_SMALL)
    return "";
  std::string out(need + 1, '\0');
  if (bw24_detokenize(model, ids.data(), static_cast<int32_t>(ids.size()), 0, out.data(), out.size(), &need) != BW24_OK)
    return "";
  out.resize(need);
  return out;
}

// "1,2,3"
std::string join_ids(const std::vector<int32_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out;
}

int fail(const char* what, const char* msg, bw24_status st) {
  std::fprintf(stderr, "bw24-generate: %s: %s (%s)\n", what, msg, bw24_status_string(st));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* model_path = nullptr;
  const char* text = nullptr;
  const char* dump_path = nullptr;
  std::string options;  // --option
  std::vector<int32_t> prompt;
  int32_t n_predict = 32, device = -1;
  bool json = false, chat = false, tokenize_only = false, bad_kv = false;
  bw24_session_params spar;
  bw24_session_params_default(&spar, sizeof spar);
  bw24_sampling sp;
  bw24_sampling_default(&sp, sizeof sp);
  sp.seed = 1234;

  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bw24-generate: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-m") model_path = value();
    else if (a == "-p") text = value();
    else if (a == "--prompt-ids") {
      if (!parse_ids(value(), &prompt)) { std::fprintf(stderr, "bw24-generate: bad --prompt-ids\n"); return 2; }
    } else if (a == "-n") n_predict = std::atoi(value());
    else if (parse_sampling_arg(a, value, &sp)) continue;
    else if (a == "--device") {
      if (!parse_device(value(), &device)) { std::fprintf(stderr, "bw24-generate: bad --device\n"); return 2; }
    } else if (a == "--ctx") spar.n_ctx = std::atoi(value());
    else if (parse_kv_arg(a, value, &spar, &bad_kv)) {
      if (bad_kv) { std::fprintf(stderr, "bw24-generate: bad %s (%s)\n", a.c_str(), bw24_example::kKvTypeNames); return 2; }
    }
    else if (bw24_example::parse_option_arg(a, value, &options)) continue;
    else if (a == "--json") json = true;
    else if (a == "--chat") chat = true;
    else if (a == "--tokenize-only") tokenize_only = true;
    else if (a == "--dump-logits") dump_path = value();
    else if (a == "-h" || a == "--help") { usage(stdout); return 0; }
    else { std::fprintf(stderr, "bw24-generate: unknown argument '%s'\n", a.c_str()); usage(stderr); return 2; }
  }
  if (!model_path || (!text && prompt.empty()) || (text && !prompt.empty()) || n_predict < 0) {
    usage(stderr);
    return 2;
  }
  if (chat && !text) {
    std::fprintf(stderr, "bw24-generate: --chat needs -p TEXT\n");
    return 2;
  }

  bw24_errbuf err;
  bw24_model_params mp;
  bw24_model_params_default(&mp, sizeof mp);
  mp.device = device;
  if (!options.empty()) mp.options = options.c_str();
  if (tokenize_only) mp.flags |= BW24_MODEL_VOCAB_ONLY;
  if (isatty(STDERR_FILENO)) mp.progress = bw24_example::print_load_progress;
  bw24_model* model = nullptr;
  double t0 = now_s();
  bw24_status st = bw24_model_open(model_path, &mp, &model, &err);
  if (st != BW24_OK) return fail("cannot open model", err.msg, st);
  double load_s = now_s() - t0;

  if (text) {
    std::string prompt_text = text;
    if (chat) {
      bw24_chat_message msg{"user", text};
      size_t need = 0;
      st = bw24_chat_render(model, &msg, 1, BW24_CHAT_ADD_GENERATION_PROMPT, nullptr, nullptr, 0, &need, &err);
      if (st == BW24_ERR_BUFFER_TOO_SMALL) {
        prompt_text.assign(need + 1, '\0');
        st = bw24_chat_render(model, &msg, 1, BW24_CHAT_ADD_GENERATION_PROMPT, nullptr, prompt_text.data(),
                              prompt_text.size(), &need, &err);
        prompt_text.resize(need);
      }
      if (st != BW24_OK) return fail("chat template", err.msg, st);
    }
    int32_t n = 0;
    // A rendered chat template already holds the BOS it wants (as apply_chat_template does).
    uint32_t tflags = BW24_TOKENIZE_PARSE_SPECIAL | (chat ? 0u : BW24_TOKENIZE_ADD_SPECIAL);
    st = bw24_tokenize(model, prompt_text.data(), prompt_text.size(), tflags, nullptr, 0, &n);
    if (st != BW24_OK && st != BW24_ERR_BUFFER_TOO_SMALL) return fail("tokenize", "the model has no usable tokenizer", st);
    prompt.resize(static_cast<size_t>(n));
    st = bw24_tokenize(model, prompt_text.data(), prompt_text.size(), tflags, prompt.data(), n, &n);
    if (st != BW24_OK) return fail("tokenize", "tokenization failed", st);
    if (prompt.empty()) {
      std::fprintf(stderr, "bw24-generate: the prompt tokenizes to nothing\n");
      return 2;
    }
  }
  if (tokenize_only) {
    const std::string ids = join_ids(prompt);
    if (json) std::printf("%s\n", nlohmann::ordered_json{{"ids", prompt}}.dump().c_str());
    else std::printf("%s\n", ids.c_str());
    bw24_model_close(model);
    return 0;
  }

  bw24_session* s = nullptr;
  st = bw24_session_create(model, &spar, &s, &err);
  if (st != BW24_OK) {
    bw24_model_close(model);
    return fail("cannot create session", err.msg, st);
  }

  double t1 = now_s();
  st = bw24_session_prefill(s, prompt.data(), static_cast<int32_t>(prompt.size()),
                            dump_path ? BW24_PREFILL_ALL_LOGITS : 0);
  if (st != BW24_OK) return fail("prefill", bw24_session_errmsg(s), st);
  double prefill_s = now_s() - t1;

  if (dump_path) {
    const float* logits;
    int32_t rows, vocab;
    st = bw24_session_logits(s, &logits, &rows, &vocab);
    if (st != BW24_OK) return fail("logits", bw24_session_errmsg(s), st);
    FILE* f = std::fopen(dump_path, "wb");
    if (!f || std::fwrite(logits, sizeof(float), size_t(rows) * vocab, f) != size_t(rows) * vocab) {
      std::fprintf(stderr, "bw24-generate: cannot write %s\n", dump_path);
      if (f) std::fclose(f);
      return 1;
    }
    std::fclose(f);
  }

  // Pull one token at a time so text streams as it is produced; bytes of a UTF-8 character split
  // across tokens are held back until the character is complete.
  std::vector<int32_t> ids;
  int32_t n_out = 0, stop = BW24_STOP_LENGTH;
  std::string pending;
  const bool stream = !json && bw24_token_to_piece(model, 0, 0, nullptr, 0, nullptr) != BW24_ERR_UNSUPPORTED;
  double t2 = now_s();
  while (static_cast<int32_t>(ids.size()) < n_predict) {
    int32_t tok;
    st = bw24_session_decode(s, &sp, &tok, 1, &n_out, &stop);
    if (st != BW24_OK) return fail("decode", bw24_session_errmsg(s), st);
    if (n_out == 0) break;
    ids.push_back(tok);
    if (stream) {
      char piece[256];
      size_t len = 0;
      if (bw24_token_to_piece(model, tok, 0, piece, sizeof piece, &len) == BW24_OK) pending.append(piece, len);
      size_t cut = complete_utf8_prefix(pending);
      std::fwrite(pending.data(), 1, cut, stdout);
      std::fflush(stdout);
      pending.erase(0, cut);
    }
    if (stop != BW24_STOP_LENGTH) break;
  }
  double decode_s = now_s() - t2;
  if (stream) {
    std::printf("%s\n", pending.c_str());
    std::fflush(stdout);
  }
  n_out = static_cast<int32_t>(ids.size());
  bw24_session_destroy(s);
  std::string out_text = detokenize(model, ids);
  bw24_model_close(model);

  double prefill_tps = prefill_s > 0 ? prompt.size() / prefill_s : 0;
  double decode_tps = decode_s > 0 && n_out > 0 ? n_out / decode_s : 0;
  if (json) {
    // Speeds rounded as the text line prints them; bytes that are not UTF-8 become U+FFFD.
    auto rounded = [](double v, double scale) { return std::round(v * scale) / scale; };
    const nlohmann::ordered_json line = {{"prompt_ids", prompt},
                                         {"ids", ids},
                                         {"text", out_text},
                                         {"load_s", rounded(load_s, 1e4)},
                                         {"prefill_tok_s", rounded(prefill_tps, 1e2)},
                                         {"decode_tok_s", rounded(decode_tps, 1e2)}};
    std::printf("%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    if (!stream) std::printf("%s\n", join_ids(ids).c_str());
    std::fprintf(stderr, "load %.3f s | prefill %zu tok, %.1f tok/s | decode %d tok, %.1f tok/s%s\n",
                 load_s, prompt.size(), prefill_tps, n_out, decode_tps,
                 stop == BW24_STOP_EOG ? " | stopped at end-of-generation" : "");
  }
  return 0;
}
