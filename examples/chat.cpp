// bw24-chat: a terminal chat over the model's chat template, using only the public C API.
//
//   bw24-chat -m PATH [--system TEXT] [-p TEXT] [-n N] [--temp T] [--top-k K] [--top-p P]
//             [--min-p P] [--seed S] [--ctx N] [--kv TYPE] [--kv-k TYPE] [--kv-v TYPE]
//             [--device cpu|cuda[:N]] [--option KEY=VALUE]
//
// Each turn renders the whole conversation with the template, tokenizes it, keeps the longest
// prefix the session already holds (bw24_session_rewind) and prefills only the rest, then streams
// the answer token by token. Commands: /reset, /system TEXT, /quit (or Ctrl-D).
#include <editline/readline.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bw24.h"
#include "examples/example_util.h"

namespace {

using bw24_example::complete_utf8_prefix;
using bw24_example::parse_device;
using bw24_example::parse_kv_arg;
using bw24_example::parse_sampling_arg;

struct Message {
  std::string role, content;
};

struct Options {
  const char* model = nullptr;
  std::string system;
  const char* once = nullptr;
  int32_t n_predict = 512, device = -1;
  bw24_sampling sampling;
  bw24_session_params session;  // --ctx, --kv
  std::string options;          // --option, the model's
};

void usage(FILE* f) {
  std::fprintf(f,
      "usage: bw24-chat -m PATH [options]\n"
      "  -m PATH            a .gguf file or a Hugging Face model directory\n"
      "  --system TEXT      system prompt\n"
      "  -p TEXT            answer this one message and exit (no prompt, no history)\n"
      "  -n N               most tokens per answer (default 512)\n"
      "  --temp T           temperature (default 0.7; 0 = greedy)\n"
      "  --top-k K          (default 40)      --top-p P   (default 0.9)\n"
      "  --min-p P          (default 0.05)    --seed S    (default: time)\n"
      "  --ctx N            context positions (default: min(training context, 4096))\n"
      "  --kv TYPE          KV cache type of K and V: f32, f16, bf16, q8_0, q4_0, fp8_e4m3\n"
      "                     (default: f32 on the CPU, f16 on CUDA); --kv-k / --kv-v TYPE: one of them\n"
      "  --option KEY=VALUE a model option (docs/abi.md: prefault, cuda_graph, kv_rotate); repeatable;\n"
      "                     kv_rotate=1 keeps a q4_0 / q8_0 cache close to f16 (CPU reference for now)\n"
      "  --device DEV       cpu (default) or cuda[:N]\n"
      "commands: /reset (forget the conversation), /system TEXT, /quit\n");
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

class Chat {
 public:
  Chat(bw24_model* m, bw24_session* s, const Options& o) : model_(m), session_(s), opt_(o) {}

  // One user turn: returns false on a fatal error.
  bool turn(const std::string& user) {
    history_.push_back({"user", user});
    std::vector<int32_t> prompt;
    if (!render_and_tokenize(&prompt)) {
      history_.pop_back();
      return true;
    }
    // Reuse what the session already holds.
    size_t keep = 0;
    while (keep < fed_.size() && keep < prompt.size() && fed_[keep] == prompt[keep]) ++keep;
    if (keep == prompt.size()) --keep;  // at least one token must be prefilled to get logits
    bw24_session_rewind(session_, static_cast<int32_t>(keep));
    fed_.resize(keep);
    double t0 = now_s();
    bw24_status st = bw24_session_prefill(session_, prompt.data() + keep, static_cast<int32_t>(prompt.size() - keep), 0);
    if (st == BW24_ERR_CONTEXT_FULL) {
      std::fprintf(stderr, "[the conversation no longer fits the context: /reset to start over]\n");
      history_.pop_back();
      return true;
    }
    if (st != BW24_OK) return fail("prefill", st);
    fed_.insert(fed_.end(), prompt.begin() + static_cast<long>(keep), prompt.end());
    double t1 = now_s();

    std::string answer_bytes, pending;
    int32_t produced = 0, stop = BW24_STOP_LENGTH;
    while (produced < opt_.n_predict) {
      int32_t tok, n_out = 0;
      st = bw24_session_decode(session_, &opt_.sampling, &tok, 1, &n_out, &stop);
      if (st == BW24_ERR_CONTEXT_FULL) { stop = BW24_STOP_CONTEXT_FULL; break; }
      if (st != BW24_OK) return fail("decode", st);
      if (n_out == 0) break;
      ++produced;
      if (stop == BW24_STOP_EOG) break;          // the turn-end token: not shown, not fed
      if (stop == BW24_STOP_LENGTH) fed_.push_back(tok);  // a context-full last token is not fed
      char piece[256];
      size_t len = 0;
      if (bw24_token_to_piece(model_, tok, 0, piece, sizeof piece, &len) == BW24_OK) {
        pending.append(piece, len);
        answer_bytes.append(piece, len);
      }
      size_t cut = complete_utf8_prefix(pending);
      std::fwrite(pending.data(), 1, cut, stdout);
      std::fflush(stdout);
      pending.erase(0, cut);
      if (stop != BW24_STOP_LENGTH) break;
    }
    std::printf("%s\n", pending.c_str());
    std::fflush(stdout);
    double t2 = now_s();
    size_t b = answer_bytes.find_first_not_of(" \n");
    history_.push_back({"assistant", b == std::string::npos ? "" : answer_bytes.substr(b)});
    std::fprintf(stderr, "[prompt %zu tok (%zu new) %.1f tok/s | answer %d tok, %.1f tok/s%s]\n", prompt.size(),
                 prompt.size() - keep, (prompt.size() - keep) / std::max(1e-9, t1 - t0), produced,
                 produced / std::max(1e-9, t2 - t1),
                 stop == BW24_STOP_CONTEXT_FULL ? ", context full" : stop == BW24_STOP_LENGTH ? ", length limit" : "");
    return true;
  }

  void reset() {
    history_.clear();
    fed_.clear();
    bw24_session_rewind(session_, 0);
  }
  void set_system(const std::string& s) {
    opt_.system = s;
    reset();
  }

 private:
  bool render_and_tokenize(std::vector<int32_t>* ids) {
    std::vector<bw24_chat_message> msgs;
    if (!opt_.system.empty()) msgs.push_back({"system", opt_.system.c_str()});
    for (const Message& m : history_) msgs.push_back({m.role.c_str(), m.content.c_str()});
    bw24_errbuf err;
    size_t need = 0;
    std::string text;
    bw24_status st = bw24_chat_render(model_, msgs.data(), static_cast<int32_t>(msgs.size()),
                                      BW24_CHAT_ADD_GENERATION_PROMPT, nullptr, nullptr, 0, &need, &err);
    if (st == BW24_ERR_BUFFER_TOO_SMALL) {
      text.assign(need + 1, '\0');
      st = bw24_chat_render(model_, msgs.data(), static_cast<int32_t>(msgs.size()), BW24_CHAT_ADD_GENERATION_PROMPT,
                            nullptr, text.data(), text.size(), &need, &err);
      text.resize(need);
    }
    if (st != BW24_OK) {
      std::fprintf(stderr, "[chat template: %s]\n", err.msg);
      return false;
    }
    int32_t n = 0;
    st = bw24_tokenize(model_, text.data(), text.size(), BW24_TOKENIZE_PARSE_SPECIAL, nullptr, 0, &n);
    ids->resize(static_cast<size_t>(n));
    if (st == BW24_ERR_BUFFER_TOO_SMALL)
      st = bw24_tokenize(model_, text.data(), text.size(), BW24_TOKENIZE_PARSE_SPECIAL, ids->data(), n, &n);
    if (st != BW24_OK || ids->empty()) {
      std::fprintf(stderr, "[tokenize failed: %s]\n", bw24_status_string(st));
      return false;
    }
    return true;
  }

  bool fail(const char* what, bw24_status st) {
    std::fprintf(stderr, "bw24-chat: %s: %s (%s)\n", what, bw24_session_errmsg(session_), bw24_status_string(st));
    return false;
  }

  bw24_model* model_;
  bw24_session* session_;
  Options opt_;
  std::vector<Message> history_;
  std::vector<int32_t> fed_;  // tokens the session holds
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bw24_sampling_default(&o.sampling, sizeof o.sampling);
  bw24_session_params_default(&o.session, sizeof o.session);
  bool bad_kv = false;
  o.sampling.temperature = 0.7f;
  o.sampling.top_k = 40;
  o.sampling.top_p = 0.9f;
  o.sampling.min_p = 0.05f;
  o.sampling.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bw24-chat: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-m") o.model = value();
    else if (a == "--system") o.system = value();
    else if (a == "-p") o.once = value();
    else if (a == "-n") o.n_predict = std::atoi(value());
    else if (parse_sampling_arg(a, value, &o.sampling)) continue;
    else if (a == "--ctx") o.session.n_ctx = std::atoi(value());
    else if (parse_kv_arg(a, value, &o.session, &bad_kv)) {
      if (bad_kv) { std::fprintf(stderr, "bw24-chat: bad %s (%s)\n", a.c_str(), bw24_example::kKvTypeNames); return 2; }
    }
    else if (bw24_example::parse_option_arg(a, value, &o.options)) continue;
    else if (a == "--device") {
      if (!parse_device(value(), &o.device)) { std::fprintf(stderr, "bw24-chat: bad --device\n"); return 2; }
    } else if (a == "-h" || a == "--help") { usage(stdout); return 0; }
    else { std::fprintf(stderr, "bw24-chat: unknown argument '%s'\n", a.c_str()); usage(stderr); return 2; }
  }
  if (!o.model || o.n_predict <= 0) {
    usage(stderr);
    return 2;
  }
  bw24_model_params mp;
  bw24_model_params_default(&mp, sizeof mp);
  mp.device = o.device;
  if (!o.options.empty()) mp.options = o.options.c_str();
  if (isatty(STDERR_FILENO)) mp.progress = bw24_example::print_load_progress;
  bw24_model* model = nullptr;
  bw24_errbuf err;
  bw24_status st = bw24_model_open(o.model, &mp, &model, &err);
  if (st != BW24_OK) {
    std::fprintf(stderr, "bw24-chat: cannot open model: %s (%s)\n", err.msg, bw24_status_string(st));
    return 1;
  }
  bw24_session* session = nullptr;
  st = bw24_session_create(model, &o.session, &session, &err);
  if (st != BW24_OK) {
    std::fprintf(stderr, "bw24-chat: cannot create session: %s\n", err.msg);
    bw24_model_close(model);
    return 1;
  }
  Chat chat(model, session, o);
  int rc = 0;
  if (o.once) {
    std::printf("> %s\n", o.once);
    rc = chat.turn(o.once) ? 0 : 1;
  } else {
    bw24_model_info info;
    info.struct_size = sizeof info;
    bw24_model_get_info(model, &info);
    std::fprintf(stderr, "bw24-chat: %s (%s %s, %d layers); /reset, /system TEXT, /quit\n", info.name, info.arch,
                 info.quant, info.n_layer);
    const bool tty = isatty(STDIN_FILENO);
    for (;;) {
      std::string line;
      if (tty) {
        char* l = readline("> ");
        if (!l) break;
        line = l;
        std::free(l);
        if (!line.empty()) add_history(line.c_str());
      } else {
        char buf[65536];
        if (!std::fgets(buf, sizeof buf, stdin)) break;
        line = buf;
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      }
      if (line.empty()) continue;
      if (line == "/quit" || line == "/exit") break;
      if (line == "/reset") { chat.reset(); std::fprintf(stderr, "[conversation cleared]\n"); continue; }
      if (line.rfind("/system", 0) == 0) {
        chat.set_system(line.size() > 8 ? line.substr(8) : "");
        std::fprintf(stderr, "[system prompt set; conversation cleared]\n");
        continue;
      }
      if (!chat.turn(line)) { rc = 1; break; }
    }
  }
  bw24_session_destroy(session);
  bw24_model_close(model);
  return rc;
}
