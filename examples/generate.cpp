// bw24-generate: one prompt in, tokens out. Uses only the public C API (include/bw24.h).
//
//   bw24-generate -m PATH (-p TEXT | --prompt-ids 1,2,3) [-n N] [--temp T] [--top-k K]
//                 [--top-p P] [--min-p P] [--seed S] [--device cpu|cuda[:N]] [--ctx N]
//                 [--json] [--dump-logits FILE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bw24.h"

namespace {

void usage(FILE* f) {
  std::fprintf(f,
      "usage: bw24-generate -m PATH (-p TEXT | --prompt-ids 1,2,3) [options]\n"
      "  -m PATH              a .gguf file or a Hugging Face model directory\n"
      "  -p TEXT              prompt text (needs the tokenizer; not available yet)\n"
      "  --prompt-ids LIST    comma-separated token ids, used exactly as given (no BOS added)\n"
      "  -n N                 tokens to generate (default 32)\n"
      "  --temp T             temperature, 0 = greedy (default 0)\n"
      "  --top-k K            (default 0 = off)\n"
      "  --top-p P            (default 1 = off)\n"
      "  --min-p P            (default 0 = off)\n"
      "  --seed S             sampler seed (default 1234)\n"
      "  --device DEV         cpu (default) or cuda[:N]\n"
      "  --ctx N              context positions (default: min(training context, 4096))\n"
      "  --json               print one JSON line with ids, text and speeds\n"
      "  --dump-logits FILE   write the prefill logits of every prompt position as float32\n"
      "                       [n_prompt][n_vocab], little-endian\n");
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

bool parse_device(const char* s, int32_t* device) {
  if (std::strcmp(s, "cpu") == 0) { *device = -1; return true; }
  if (std::strncmp(s, "cuda", 4) != 0) return false;
  if (s[4] == '\0') { *device = 0; return true; }
  if (s[4] != ':') return false;
  char* end;
  long v = std::strtol(s + 5, &end, 10);
  if (*end || v < 0 || v > 1024) return false;
  *device = static_cast<int32_t>(v);
  return true;
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
  std::vector<int32_t> prompt;
  int32_t n_predict = 32, n_ctx = 0, device = -1;
  bool json = false;
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
    else if (a == "--temp") sp.temperature = std::strtof(value(), nullptr);
    else if (a == "--top-k") sp.top_k = std::atoi(value());
    else if (a == "--top-p") sp.top_p = std::strtof(value(), nullptr);
    else if (a == "--min-p") sp.min_p = std::strtof(value(), nullptr);
    else if (a == "--seed") sp.seed = std::strtoull(value(), nullptr, 10);
    else if (a == "--device") {
      if (!parse_device(value(), &device)) { std::fprintf(stderr, "bw24-generate: bad --device\n"); return 2; }
    } else if (a == "--ctx") n_ctx = std::atoi(value());
    else if (a == "--json") json = true;
    else if (a == "--dump-logits") dump_path = value();
    else if (a == "-h" || a == "--help") { usage(stdout); return 0; }
    else { std::fprintf(stderr, "bw24-generate: unknown argument '%s'\n", a.c_str()); usage(stderr); return 2; }
  }
  if (!model_path || (!text && prompt.empty()) || (text && !prompt.empty()) || n_predict < 0) {
    usage(stderr);
    return 2;
  }
  if (text) {
    std::fprintf(stderr, "bw24-generate: -p needs the tokenizer, which is not in this build yet; "
                         "use --prompt-ids\n");
    return 2;
  }

  bw24_errbuf err;
  bw24_model_params mp;
  bw24_model_params_default(&mp, sizeof mp);
  mp.device = device;
  bw24_model* model = nullptr;
  double t0 = now_s();
  bw24_status st = bw24_model_open(model_path, &mp, &model, &err);
  if (st != BW24_OK) return fail("cannot open model", err.msg, st);
  double load_s = now_s() - t0;

  bw24_session_params spar;
  bw24_session_params_default(&spar, sizeof spar);
  spar.n_ctx = n_ctx;
  bw24_session* s = nullptr;
  st = bw24_session_create(model, &spar, &s, &err);
  bw24_model_close(model);
  if (st != BW24_OK) return fail("cannot create session", err.msg, st);

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

  std::vector<int32_t> ids(static_cast<size_t>(n_predict));
  int32_t n_out = 0, stop = 0;
  double t2 = now_s();
  st = bw24_session_decode(s, &sp, ids.data(), n_predict, &n_out, &stop);
  double decode_s = now_s() - t2;
  if (st != BW24_OK) return fail("decode", bw24_session_errmsg(s), st);
  ids.resize(static_cast<size_t>(n_out));
  bw24_session_destroy(s);

  double prefill_tps = prefill_s > 0 ? prompt.size() / prefill_s : 0;
  double decode_tps = decode_s > 0 && n_out > 0 ? n_out / decode_s : 0;
  auto join = [](const std::vector<int32_t>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out;
  };
  if (json) {
    std::printf("{\"prompt_ids\":[%s],\"ids\":[%s],\"text\":\"\",\"load_s\":%.4f,"
                "\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f}\n",
                join(prompt).c_str(), join(ids).c_str(), load_s, prefill_tps, decode_tps);
  } else {
    std::printf("%s\n", join(ids).c_str());
    std::fprintf(stderr, "load %.3f s | prefill %zu tok, %.1f tok/s | decode %d tok, %.1f tok/s%s\n",
                 load_s, prompt.size(), prefill_tps, n_out, decode_tps,
                 stop == BW24_STOP_EOG ? " | stopped at end-of-generation" : "");
  }
  return 0;
}
