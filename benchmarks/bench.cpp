// bw24-bench: prefill (pp) and decode (tg) speed at context depths, llama-bench style, for a model
// file or a synthetic shape (-m synthetic:SHAPE:QUANT). Every row carries bytes/token and the % of
// the device-to-device copy bandwidth measured in the same run.
//
//   bw24-bench -m PATH|synthetic:SHAPE:QUANT [-p 512] [-n 128] [-d 0,4096] [-r 3]
//              [--kv auto|f32|f16|bf16|q8_0|q4_0|fp8_e4m3] [--kv-k TYPE] [--kv-v TYPE] [--device cuda:N|cpu]
//              [--option KEY=VALUE] [--json FILE]
//
// Each test starts from an empty context filled to its depth d (random tokens), as llama-bench's do:
// pp<p> prefills p tokens at positions d .. d + p - 1, and tg<n> prefills one token and decodes n at
// positions d + 1 .. d + n, whatever -p is (so tg128 at depth 0 runs at positions 1-128). -p and -d
// also size the session: n_ctx = max depth + max(p, n) + 8.
// Prefill rows carry the weight bytes of the pass divided by its tokens (how far the pass is from
// being bandwidth bound: far) and TFLOP/s (2 x the weights' multiply-adds x tokens / time).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef BW24_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/common/device.h"
#endif

#include "benchmarks/synthetic.h"
#include "lib/core/status.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"
#include "lib/kv/kv_cache.h"

using namespace bw24;

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Device-to-device copy bandwidth (read + write bytes / time) with the runtime's copy, median of 5.
double copy_bandwidth_gbs(int device) {
#ifdef BW24_WITH_CUDA
  return cuda::copy_bandwidth_gbs(device);
#else
  (void)device;
  return 0;
#endif
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

struct Row {
  std::string test;
  int depth;
  double tok_s;
  double bytes_per_token;
  double tflops = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string model_arg, json_path, device_name = "cuda:0";
  int n_prompt = 512, n_gen = 128, reps = 3, device = 0;
  std::string kv_k = "auto", kv_v = "auto", options;  // options: --option, ";"-joined
  std::vector<int> depths = {0};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "bw24-bench: %s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "-m") model_arg = value();
    else if (a == "-p") n_prompt = std::atoi(value());
    else if (a == "-n") n_gen = std::atoi(value());
    else if (a == "-d") depths = parse_list(value());
    else if (a == "-r") reps = std::max(1, std::atoi(value()));
    else if (a == "--json") json_path = value();
    else if (a == "--kv") kv_k = kv_v = value();
    else if (a == "--kv-k") kv_k = value();
    else if (a == "--kv-v") kv_v = value();
    else if (a == "--option") options += (options.empty() ? "" : ";") + std::string(value());  // docs/abi.md's model options
    else if (a == "--device") {
      device_name = value();
      device = device_name == "cpu" ? -1 : (device_name.size() > 5 ? std::atoi(device_name.c_str() + 5) : 0);
    } else {
      std::fprintf(stderr, "usage: bw24-bench -m PATH|synthetic:SHAPE:QUANT [-p N] [-n N] [-d 0,4096] [-r N] "
                           "[--kv auto|f32|f16|bf16|q8_0|q4_0|fp8_e4m3] [--kv-k TYPE] [--kv-v TYPE] "
                           "[--device cuda:N|cpu] [--option KEY=VALUE] [--json FILE]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  // Each KV type name's type (its value is the BW24_KV_* code); BW24_KV_AUTO is f16 on CUDA, f32 on the CPU
  // (session.cpp).
  auto kv_type = [&](std::string& name) {
    if (name == "auto") name = device >= 0 ? "f16" : "f32";
    return kv::kv_type_from_name(name);
  };
  const std::optional<kv::KvType> kv_k_type = kv_type(kv_k), kv_v_type = kv_type(kv_v);
  if (!kv_k_type || !kv_v_type) {
    std::fprintf(stderr, "bw24-bench: --kv, --kv-k and --kv-v take auto, f32, f16, bf16, q8_0, q4_0 or fp8_e4m3\n");
    return 2;
  }
  // The rows' kv_type: one name when K and V share it, else "K/V" (q8_0/f16).
  const std::string kv = kv_k == kv_v ? kv_k : kv_k + "/" + kv_v;
  if (model_arg.empty()) {
    std::fprintf(stderr, "bw24-bench: -m is required (synthetic shapes:");
    for (auto& s : bench::synthetic_shapes()) std::fprintf(stderr, " %s", s.c_str());
    std::fprintf(stderr, ")\n");
    return 2;
  }
  engine::ModelOptions mo;
  mo.device = device;
  mo.options = options;
  double t0 = now_s();
  absl::StatusOr<std::shared_ptr<const engine::Model>> model;
  if (model_arg.rfind("synthetic:", 0) == 0) {
    std::string rest = model_arg.substr(10);
    size_t colon = rest.find(':');
    if (colon == std::string::npos) { std::fprintf(stderr, "bw24-bench: synthetic:SHAPE:QUANT\n"); return 2; }
    auto dir = bench::build_synthetic(rest.substr(0, colon), rest.substr(colon + 1));
    if (!dir.ok()) { std::fprintf(stderr, "bw24-bench: %s\n", message_of(dir.status()).c_str()); return 1; }
    model = engine::Model::from_directory(std::move(dir).value(), model_arg, mo);
  } else {
    model = engine::Model::open(model_arg, mo);
  }
  if (!model.ok()) { std::fprintf(stderr, "bw24-bench: %s\n", message_of(model.status()).c_str()); return 1; }
  const engine::Model& m = **model;
  // The file's mix ("Q4_K_M", general.file_type; synthetic models record theirs too), else its matrices' types.
  const std::string& quant = m.quant();
  std::fprintf(stderr, "loaded %s in %.1f s (%.2f GB)\n", m.name().c_str(), now_s() - t0, m.n_bytes() / 1e9);

  // Bytes a decode step must move: every weight matrix once (the embedding only one row; of the
  // stacked experts only the n_used of n_expert a token routes to), the KV cache of the attention
  // layers up to the depth (K and V each in its type), and the delta-net layers' recurrent state (read and
  // written, f32).
  double weight_bytes = 0, kv_row_bytes = 0, macs_per_token = 0;
  const arch::ModelGraph& g = m.graph();
  for (const auto& t : m.dir().tensors())
    if (&t != g.tok_embd.t || g.tied_embeddings) {
      weight_bytes += double(t.n_bytes);
      if (t.n_dims >= 2) macs_per_token += double(t.n_elements());
    }
  // A cached position's K and V bytes for each element of a KV head (the same for every layer).
  const double kv_pair_bytes = kv::kv_element_bytes(*kv_k_type) + kv::kv_element_bytes(*kv_v_type);
  for (const auto& L : g.layers) {
    if (L.mlp.is_moe()) {
      const double unused = 1.0 - double(L.mlp.moe.n_used) / L.mlp.moe.n_expert;
      for (const arch::Weight* w : {&L.mlp.moe.gate_exps, &L.mlp.moe.up_exps, &L.mlp.moe.down_exps})
      {
        weight_bytes -= unused * double(w->t->n_bytes);
        macs_per_token -= unused * double(w->t->n_elements());
      }
    }
    if (L.recurrent)
      weight_bytes += 2.0 * 4 * L.delta_net.n_v_heads * L.delta_net.d_k * L.delta_net.d_v;
    else
      kv_row_bytes += double(L.attn.n_head_kv) * L.attn.head_dim * kv_pair_bytes;
  }

  const double copy_gbs = device >= 0 ? copy_bandwidth_gbs(device) : 0;
  std::string gpu = "cpu";
#ifdef BW24_WITH_CUDA
  if (device >= 0) {
    char name[256] = "?";
    int maj, min;
    unsigned long long mem;
    cuda::device_properties(device, name, sizeof name, &maj, &min, &mem);
    gpu = name;
  }
#endif
  const int max_depth = *std::max_element(depths.begin(), depths.end());
  engine::SessionOptions so;
  so.n_ctx = max_depth + std::max(n_prompt, n_gen) + 8;
  so.kv_type_k = static_cast<int32_t>(*kv_k_type);
  so.kv_type_v = static_cast<int32_t>(*kv_v_type);
  auto session = engine::Session::create(*model, so);
  if (!session.ok()) { std::fprintf(stderr, "bw24-bench: %s\n", message_of(session.status()).c_str()); return 1; }
  engine::Session& s = **session;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> tok(0, g.n_vocab - 1);
  auto random_tokens = [&](int n) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (auto& t : v) t = tok(rng);
    return v;
  };

  std::vector<Row> rows;
  for (int depth : depths) {
    std::vector<double> pp, tg;
    for (int r = 0; r < reps; ++r) {
      auto fill = [&]() -> bool {
        s.rewind(0).IgnoreError();
        if (depth == 0) return true;
        auto ctx = random_tokens(depth);
        return s.prefill(ctx.data(), depth, false).ok();
      };
      if (n_prompt > 0) {
        if (!fill()) return 1;
        auto prompt = random_tokens(n_prompt);
        double a = now_s();
        if (!s.prefill(prompt.data(), n_prompt, false).ok()) return 1;
        pp.push_back(n_prompt / (now_s() - a));
      }
      if (n_gen > 0) {
        if (!fill()) return 1;
        int32_t first = tok(rng);
        if (!s.prefill(&first, 1, false).ok()) return 1;
        std::vector<int32_t> out(static_cast<size_t>(n_gen));
        engine::DecodeResult res;
        double a = now_s();
        absl::Status st = s.decode(sampling::Params{}, std::nullopt, /*ignore_eog=*/true, out.data(), n_gen, &res);
        double dt = now_s() - a;
        if (!st.ok()) { std::fprintf(stderr, "bw24-bench: %s\n", message_of(st).c_str()); return 1; }
        tg.push_back(res.n_tokens / dt);
      }
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : v[v.size() / 2];
    };
    if (!pp.empty()) {
      const double tok_s = median(pp);
      rows.push_back({"pp" + std::to_string(n_prompt), depth, tok_s, weight_bytes / n_prompt,
                      2 * macs_per_token * tok_s / 1e12});
    }
    if (!tg.empty())
      rows.push_back({"tg" + std::to_string(n_gen), depth, median(tg), weight_bytes + kv_row_bytes * (depth + n_gen / 2.0)});
  }

  if (!options.empty()) std::printf("model options: %s\n\n", options.c_str());
  std::printf("| model | quant | KV | test | depth | tok/s | bytes/token | %% of copy BW (%.0f GB/s) | TFLOP/s |\n"
              "|---|---|---|---|---|---|---|---|---|\n",
              copy_gbs);
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %s | %d | %.1f | %s | %s | %s |\n", m.name().c_str(), quant.c_str(), kv.c_str(),
                r.test.c_str(), r.depth,
                r.tok_s, r.bytes_per_token > 0 ? std::to_string(static_cast<long long>(r.bytes_per_token)).c_str() : "-",
                r.bytes_per_token > 0 && copy_gbs > 0
                    ? (std::to_string(r.bytes_per_token * r.tok_s / (copy_gbs * 1e9) * 100).substr(0, 5) + " %").c_str()
                    : "-",
                r.tflops > 0 ? std::to_string(r.tflops).substr(0, 5).c_str() : "-");
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << "[\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "  {\"model\": \"" << model_arg << "\", \"quant\": \"" << quant << "\", \"test\": \"" << r.test
        << "\", \"depth\": " << r.depth << ", \"kv_type\": \"" << kv << "\", \"tok_s\": " << r.tok_s
        << ", \"bytes_per_token\": " << static_cast<long long>(r.bytes_per_token) << ", \"pct_copy_bw\": "
        << (r.bytes_per_token > 0 && copy_gbs > 0 ? r.bytes_per_token * r.tok_s / (copy_gbs * 1e9) * 100 : 0)
        << ", \"tflop_s\": " << r.tflops << ", \"copy_bw_gbs\": " << copy_gbs << ", \"gpu\": \"" << gpu << "\", \"commit\": \"" << BW24_GIT_SHA
        << "\"" << (options.empty() ? "" : ", \"options\": \"" + options + "\"") << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "]\n";
  }
  return 0;
}
