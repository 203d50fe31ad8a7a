// The CUDA runner against the CPU reference on the same quantized weights (label gpu; exit 77 =
// Skipped without a device). Synthetic models (benchmarks/synthetic.cpp) in every quant mix the
// GPU runs: prefill logits of every position of a 517-token prompt (a 512-token GEMM pass, then a
// 5-token GEMV pass), then 32 teacher-forced decode steps (both runners fed the CPU's greedy
// token, so one flipped argmax does not derail the rest).
//
// Tolerances: prefill passes run the GEMM and flash attention in bf16 (cuda/gemm/gemm.cuh) for
// every type; decode GEMVs take int8 activations for quantized weights (cuda/gemv/gemv_q8.cu,
// ~0.5 % error per matmul) and f32 for float weights, but every decode step also attends to the
// K/V rows the bf16 prefill wrote. So the normalized logit error must stay below 5e-2 throughout
// (the float GEMV's own f32 exactness is bw24-kernel-check's and the goldens' job), and the
// argmax must agree wherever the CPU's top-2 margin exceeds 3x the largest absolute logit error
// of that step. Each mix prints its numbers and the steps whose argmax flipped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include "benchmarks/synthetic.h"
#include "lib/core/status.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"
#include "tests/common/stop_runs.h"

using namespace bw24;

namespace {

// Every case here needs a device: without one the binary reports Skipped to ctest (exit 77).
void require_gpu() {
  if (engine::cuda_device_count() > 0) return;
  std::cout << "SKIPPED: no CUDA device" << std::endl;
  std::exit(77);
}

std::shared_ptr<const engine::Model> open_synthetic(const std::string& shape, const std::string& quant, int device) {
  auto dir = bench::build_synthetic(shape, quant);
  REQUIRE(dir.ok());
  engine::ModelOptions mo;
  mo.device = device;
  auto m = engine::Model::from_directory(std::move(dir).value(), shape + ":" + quant, mo);
  REQUIRE(m.ok());
  return *m;
}

std::vector<float> logits_of(engine::Session& s) {
  const float* p;
  int32_t rows, vocab;
  REQUIRE(s.logits(&p, &rows, &vocab).ok());
  return std::vector<float>(p, p + size_t(rows) * vocab);
}

struct RowStats {
  double nerr, max_abs;
};
RowStats compare(const float* gpu, const float* cpu, int n) {
  double num = 0, den = 0, mx = 0;
  for (int i = 0; i < n; ++i) {
    const double d = double(gpu[i]) - cpu[i];
    if (!std::isfinite(gpu[i])) return {INFINITY, INFINITY};
    num += d * d;
    den += double(cpu[i]) * cpu[i];
    mx = std::max(mx, std::fabs(d));
  }
  return {std::sqrt(num / std::max(den, 1e-30)), mx};
}

int argmax(const float* x, int n) { return static_cast<int>(std::max_element(x, x + n) - x); }
float margin(const float* x, int n) {  // top-1 minus top-2
  float a = -INFINITY, b = -INFINITY;
  for (int i = 0; i < n; ++i) {
    if (x[i] > a) {
      b = a;
      a = x[i];
    } else if (x[i] > b) {
      b = x[i];
    }
  }
  return a - b;
}

}  // namespace

namespace {

struct CaseResult {
  double worst_prefill, worst_decode;
  int unexplained;
};

// One side of a comparison: the device (-1: the CPU reference); on the CPU, whether it rounds
// product inputs to int8 as the CUDA GEMV does (engine::SessionOptions::round_act_int8); on the
// GPU, whether prefill passes run on the GEMM (else GEMV passes, SessionOptions::prefill_gemm).
struct Side {
  int device;
  bool round_int8;
  bool prefill_gemm = true;
  int64_t gemm_scratch_elems = 0;  // GPU: the expansion scratch cap (SessionOptions), 0 = default
  bool moe_int8_prefill = true;    // GPU: Q4_K / Q6_K experts through the int8 grouped GEMM (SessionOptions)
  bool moe_int8_superblock = true;  // GPU: its activations one scale a 256 columns (the superblock-wide Q4_K kernel)
};
constexpr Side kCpu{-1, false}, kCpuInt8{-1, true}, kGpu{0, false}, kGpuGemv{0, false, false};
// The GEMM prefill with the scratch of 3 experts of tiny-qwen3moe-all (gate + up 2 x 256 x 256 each):
// experts in groups of 3, 3, 2 and dense weights expanded in row slices, as on large models.
constexpr Side kGpuSmallScratch{0, false, true, 3 * 2 * 256 * 256};
// The same with the quantized experts on the bf16 grouped GEMM (expanded in its tiles), not the int8 one.
constexpr Side kGpuSmallScratchBf16{0, false, true, 3 * 2 * 256 * 256, false};
// The int8 grouped GEMM with one activation scale a 32 columns (its per-sub-block kernel).
constexpr Side kGpuSmallScratchQ8Blocks{0, false, true, 3 * 2 * 256 * 256, true, false};

// Side `gpu` against the reference side `cpu` on one synthetic model: the logits of every prompt
// position, then 32 greedy steps (the reference's tokens).
CaseResult gpu_vs_cpu(const std::string& shape, const std::string& quant, double tol, Side ref_side = kCpu,
                      Side other_side = kGpu) {
  INFO(shape << " " << quant);
  constexpr int kPrompt = 517;
  auto cpu_model = open_synthetic(shape, quant, ref_side.device);
  auto gpu_model = open_synthetic(shape, quant, other_side.device);
  engine::SessionOptions ref_opt, other_opt;
  ref_opt.round_act_int8 = ref_side.round_int8;
  other_opt.round_act_int8 = other_side.round_int8;
  other_opt.prefill_gemm = other_side.prefill_gemm;
  other_opt.gemm_scratch_elems = other_side.gemm_scratch_elems;
  other_opt.moe_int8_prefill = other_side.moe_int8_prefill;
  other_opt.moe_int8_superblock = other_side.moe_int8_superblock;
  auto cpu = engine::Session::create(cpu_model, ref_opt);
  auto gpu = engine::Session::create(gpu_model, other_opt);
  REQUIRE(cpu.ok());
  REQUIRE(gpu.ok());
  const int V = cpu_model->graph().n_vocab;
  std::mt19937 rng(11);
  std::vector<int32_t> prompt(kPrompt);
  for (auto& t : prompt) t = static_cast<int32_t>(rng() % V);
  REQUIRE((*cpu)->prefill(prompt.data(), kPrompt, true).ok());
  REQUIRE((*gpu)->prefill(prompt.data(), kPrompt, true).ok());
  std::vector<float> lc = logits_of(**cpu), lg = logits_of(**gpu);
  double worst = 0, worst_prefill = 0;
  int flips = 0, unexplained = 0, first_over = -1;  // the first row over the tolerance, if any
  std::string flip_log;
  auto step = [&](const float* g, const float* c, int where) {
    const RowStats st = compare(g, c, V);
    worst = std::max(worst, st.nerr);
    if (st.nerr >= tol && first_over < 0) first_over = where;
    if (st.nerr >= tol && std::getenv("BW24_TEST_ROWS")) std::cout << "  row " << where << " nerr " << st.nerr << "\n";
    if (argmax(g, V) != argmax(c, V)) {
      ++flips;
      const float m = margin(c, V);
      flip_log += " @" + std::to_string(where) + " (margin " + std::to_string(m) + ", max err " +
                  std::to_string(st.max_abs) + ")";
      if (m > 3 * st.max_abs) ++unexplained;
    }
  };
  for (int r = 0; r < kPrompt; ++r) step(&lg[size_t(r) * V], &lc[size_t(r) * V], r);
  std::swap(worst, worst_prefill);
  int32_t next = argmax(&lc[(kPrompt - 1) * size_t(V)], V);
  for (int i = 0; i < 32; ++i) {
    REQUIRE((*cpu)->prefill(&next, 1, false).ok());
    REQUIRE((*gpu)->prefill(&next, 1, false).ok());
    lc = logits_of(**cpu);
    lg = logits_of(**gpu);
    step(lg.data(), lc.data(), kPrompt + i);
    next = argmax(lc.data(), V);
  }
  std::cout << (other_side.device >= 0 ? (other_side.prefill_gemm ? "gpu" : "gpu-gemv") : other_side.round_int8 ? "cpu-int8" : "cpu") << " vs "
                << (ref_side.round_int8 ? "cpu-int8 " : "cpu ") << shape << " " << quant
                << ": max normalized logit error prefill " << worst_prefill
            << ", decode " << worst << (first_over >= 0 ? ", first row over tolerance " + std::to_string(first_over) : "")
            << ", argmax flips " << flips << "/" << kPrompt + 32 << flip_log << "\n";
  return {worst_prefill, worst, unexplained};
}

}  // namespace

TEST_CASE("CUDA runner vs CPU reference on quantized synthetic models", "[gpu]") {
  require_gpu();
  // Dense shapes in every quant mix; the MoE hybrid in BF16 on GEMV passes (f32 activations: this
  // is where routing, shared expert and delta net are compared without activation rounding); the
  // grouped expert GEMM of MoE prefill on a MoE with every expert used (bf16 rounding cannot move
  // a token between experts there; with top-k routing it does at near-ties, see [gpu-diag]), its
  // quantized experts on the int8 grouped GEMM (the default) and on the bf16 one.
  struct Case {
    std::string shape, quant;
    Side gpu;
  };
  std::vector<Case> cases = {{"tiny-qwen35moe", "BF16", kGpuGemv},
                             {"tiny-qwen3moe-all", "BF16", kGpuSmallScratch},
                             {"tiny-qwen3moe-all", "Q4_K_M", kGpuSmallScratch},
                             {"tiny-qwen3moe-all", "Q4_K_M", kGpuSmallScratchBf16},
                             {"tiny-qwen3moe-all", "Q4_K_M", kGpuSmallScratchQ8Blocks}};
  for (const char* shape : {"tiny-qwen3", "tiny-llama"})
    for (const char* quant : {"F16", "BF16", "Q8_0", "Q4_K_M", "Q5_K_M", "Q6_K", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
                              "IQ4_XS"})
      cases.push_back({shape, quant, kGpu});
  const char* only = std::getenv("BW24_TEST_SHAPE");  // debugging: one shape, one quant mix
  const char* only_quant = std::getenv("BW24_TEST_QUANT");
  for (const auto& [shape, quant, side] : cases) {
    if ((only && shape != only) || (only_quant && quant != only_quant)) continue;
    INFO(shape << " " << quant);
    const double tol = 5e-2;
    const CaseResult r = gpu_vs_cpu(shape, quant, tol, kCpu, side);
    CHECK(r.worst_prefill < tol);
    CHECK(r.worst_decode < tol);
    CHECK(r.unexplained == 0);
  }
}

// Not a gate (hidden; run with "[gpu-diag]"): the quantized MoE and hybrid models, where int8 (GEMV)
// and bf16 (GEMM) activations move router logits across top-k boundaries and flip the sign of
// near-zero q.k products in the delta net's first tokens; docs/performance.md records the numbers.
TEST_CASE("CUDA runner vs CPU reference on quantized MoE and hybrid synthetic models", "[.][gpu-diag]") {
  require_gpu();
  const char* only = std::getenv("BW24_TEST_SHAPE");  // debugging: one shape, one quant mix
  const char* only_quant = std::getenv("BW24_TEST_QUANT");
  for (const std::string shape : {"tiny-qwen3moe", "tiny-qwen35", "tiny-qwen35moe"})
    for (const std::string quant : {"BF16", "Q8_0", "Q4_K_M"}) {
      if ((only && shape != only) || (only_quant && quant != only_quant)) continue;
      // The default GPU path (prefill on the GEMM: bf16 activations, the grouped expert GEMM)
      // against the f32 reference; GEMV passes against the f32 reference and against the
      // reference rounding its product inputs to int8 as the GPU's GEMV does.
      for (auto [ref, gpu] : {std::pair{kCpu, kGpu}, std::pair{kCpu, kGpuGemv}, std::pair{kCpuInt8, kGpuGemv}}) {
        const CaseResult r = gpu_vs_cpu(shape, quant, 5e-2, ref, gpu);
        CHECK(std::isfinite(r.worst_prefill));
        CHECK(std::isfinite(r.worst_decode));
      }
    }
}

// Greedy decoding on the device (the runner returns only the argmax id) against the host path
// over the same GPU logits (one token at a time, logits copied back, sampling::argmax): identical
// tokens; the logits asked for afterwards (copied from the device, Runner::last_logits) have the
// argmax a further decode returns; a second decode call continues from the device's pending
// choice. A dense model and a hybrid (recurrent state: no recompute possible).
TEST_CASE("CUDA refuses option kv_rotate=1 where it would rotate, by name", "[gpu]") {
  require_gpu();
  // The CPU reference rotates q8_0 / q4_0 caches of head sizes that are multiples of 64 (lib/kv);
  // the CUDA kernels do not yet, so such a session must fail, not silently run unrotated.
  auto dir = bench::build_synthetic("tiny-qwen3", "Q8_0");  // head_dim 64
  REQUIRE(dir.ok());
  engine::ModelOptions mo;
  mo.device = 0;
  mo.options = "kv_rotate=1";
  auto m = engine::Model::from_directory(std::move(dir).value(), "tiny-qwen3:Q8_0", mo);
  REQUIRE(m.ok());
  engine::SessionOptions so;
  so.kv_type_k = so.kv_type_v = static_cast<int32_t>(kv::KvType::kQ4_0);
  auto refused = engine::Session::create(*m, so);
  REQUIRE(!refused.ok());
  CHECK(code_of(refused.status()) == Code::kUnsupported);
  CHECK(std::string(refused.status().message()).find("kv_rotate") != std::string::npos);
  so.kv_type_k = so.kv_type_v = static_cast<int32_t>(kv::KvType::kF16);  // nothing to rotate: runs
  CHECK(engine::Session::create(*m, so).ok());
}

TEST_CASE("CUDA greedy decode on the device equals the host argmax", "[gpu]") {
  require_gpu();
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) {
    INFO(shape);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    auto dev = engine::Session::create(model, {});
    auto host = engine::Session::create(model, {});
    REQUIRE(dev.ok());
    REQUIRE(host.ok());
    std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64};
    REQUIRE((*dev)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    REQUIRE((*host)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    std::vector<int32_t> got(24);
    engine::DecodeResult res;
    REQUIRE((*dev)->decode(sampling::Params{}, std::nullopt, true, got.data(), 16, &res).ok());
    REQUIRE(res.n_tokens == 16);
    REQUIRE((*dev)->decode(sampling::Params{}, std::nullopt, true, got.data() + 16, 8, &res).ok());
    REQUIRE(res.n_tokens == 8);
    std::vector<int32_t> want;
    for (int i = 0; i < 24; ++i) {
      const int32_t t = argmax(logits_of(**host).data(), V);
      want.push_back(t);
      REQUIRE((*host)->prefill(&t, 1, false).ok());
    }
    CHECK(got == want);
    const int32_t after = argmax(logits_of(**dev).data(), V);  // the device's last row
    CHECK(after == argmax(logits_of(**host).data(), V));
  }
}

// The fused launches run the separate launches' code: flash decode's RoPE / KV store
// (RunnerOptions::fused_rope, qk_rope_store's code) and its O epilogue (fused_o_epilogue: q read in
// place and the output gate on gated layers, sigmoid_mul's arithmetic; O as the O projection's
// int8 input, store_act_q8), the routed down projection's combine (fused_combine,
// moe_combine_value), the MoE router's input norm (fused_moe_norm, rmsnorm_q8's bits; the tiny
// MoEs' routers are too narrow for the cluster router, so moe_gate launches the norm itself there:
// the kernel check's "moe_gate norm" rows compare the fold) and the delta net's conv, recurrence
// and int8 out_proj input (fused_delta_net, gdn_decode: conv_token / recur_token / store_act_q8),
// so every later kernel's input is the same: logits bit-identical with all five off, over a 6-token
// pass (GEMV: combine and delta net fused, RoPE and the O epilogue not) and 12 one-token steps, on a
// dense model, the hybrid (gated attention; delta-net heads of 64), a MoE and the hybrid MoE (a
// shared expert).
TEST_CASE("CUDA decode: fused launches equal the separate launches", "[gpu]") {
  require_gpu();
  for (auto [shape, quant] : {std::pair{"tiny-qwen3", "Q4_K_M"}, std::pair{"tiny-qwen35", "Q4_K_M"},
                              std::pair{"tiny-qwen3moe", "Q4_K_M"}, std::pair{"tiny-qwen35moe", "Q8_0"}}) {
    INFO(shape << " " << quant);
    auto model = open_synthetic(shape, quant, 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions launches_opt;
    launches_opt.fused_rope = false;
    launches_opt.fused_combine = false;
    launches_opt.fused_moe_norm = false;
    launches_opt.fused_delta_net = false;
    launches_opt.fused_o_epilogue = false;
    auto fused = engine::Session::create(model, {});
    auto launches = engine::Session::create(model, launches_opt);
    REQUIRE(fused.ok());
    REQUIRE(launches.ok());
    std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99};
    REQUIRE((*fused)->prefill(prompt.data(), int32_t(prompt.size()), true).ok());
    REQUIRE((*launches)->prefill(prompt.data(), int32_t(prompt.size()), true).ok());
    std::vector<float> a = logits_of(**fused), b = logits_of(**launches);
    REQUIRE(a.size() == prompt.size() * size_t(V));
    CHECK(a == b);
    for (int step = 0; step < 12; ++step) {
      const int32_t t = argmax(b.data() + b.size() - size_t(V), V);
      REQUIRE((*fused)->prefill(&t, 1, false).ok());
      REQUIRE((*launches)->prefill(&t, 1, false).ok());
      a = logits_of(**fused);
      b = logits_of(**launches);
      CHECK(a == b);
    }
  }
}

// The folded norms (RunnerOptions::fold_norms: the O projection and the down write the next norm's int8
// input, its products apply 1 / rms) against the rmsnorm_q8 launches, on Qwen3-8B's widths (their rule
// takes them there, not at the tiny shapes; Qwen3.5-9B's: its FFN norms after the delta nets' out_proj and the
// gated attention's O), both against the CPU reference (f32 activations): 24
// one-token steps after a 6-token prefill, the reference's tokens fed to all three. The folded steps'
// logits no further from the reference than 1.5 x the launches' worst (both int8 paths; the fold rounds
// its codes from x w instead of x w / rms) and under a bound (below), their argmax the reference's but
// at a near-tie; and not bit-identical to the launches', so the fold ran (with it off, they are).
TEST_CASE("CUDA decode: folded norms against the norm launches", "[gpu]") {
  require_gpu();
  // The suite's 5e-2 on the dense shape; on the hybrid at these widths the launches themselves read 0.051 from the
  // f32 reference (next362), so 1e-1 there.
  for (const auto& [shape, bound] : {std::pair{"mid-qwen3", 5e-2}, std::pair{"mid-qwen35", 1e-1}}) {
    INFO(shape);
    auto cpu_model = open_synthetic(shape, "Q4_K_M", -1);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions launches_opt;
    launches_opt.fold_norms = false;
    auto cpu = engine::Session::create(cpu_model, {});
    auto folded = engine::Session::create(model, {});
    auto launches = engine::Session::create(model, launches_opt);
    REQUIRE(cpu.ok());
    REQUIRE(folded.ok());
    REQUIRE(launches.ok());
    std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99};
    for (auto* s : {&cpu, &folded, &launches}) REQUIRE((**s)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    std::vector<float> c = logits_of(**cpu), a = logits_of(**folded), b = logits_of(**launches);
    CHECK(a == b);  // a prefill pass folds nothing
    double worst_fold = 0, worst_launches = 0, worst_between = 0;
    int differ = 0, far_flips = 0;
    for (int step = 0; step < 24; ++step) {
      const int32_t t = argmax(c.data() + c.size() - size_t(V), V);
      for (auto* s : {&cpu, &folded, &launches}) REQUIRE((**s)->prefill(&t, 1, false).ok());
      c = logits_of(**cpu);
      a = logits_of(**folded);
      b = logits_of(**launches);
      const RowStats sf = compare(a.data(), c.data(), V), sl = compare(b.data(), c.data(), V);
      worst_fold = std::max(worst_fold, sf.nerr);
      worst_launches = std::max(worst_launches, sl.nerr);
      worst_between = std::max(worst_between, compare(a.data(), b.data(), V).nerr);
      differ += a != b;
      if (argmax(a.data(), V) != argmax(c.data(), V) && margin(c.data(), V) > 3 * sf.max_abs) ++far_flips;
    }
    std::cout << shape << " Q4_K_M against the CPU reference, max normalized logit error: folded norms " << worst_fold
              << ", norm launches " << worst_launches << " (between them " << worst_between
              << "); folded steps not bit-equal " << differ << "/24, argmax flips beyond a near-tie " << far_flips
              << "\n";
    CHECK(worst_fold <= 1.5 * worst_launches);
    CHECK(worst_fold < bound);
    CHECK(differ > 0);
    CHECK(far_flips == 0);
  }
}

// The captured step in its two regimes (below cuda::kFlashDecodeMergeFrom without flash decode's
// merge launch, from it with) against uncaptured one-token passes, whose flash decode decides from
// the host's position: logits bit-identical over the steps across position 1,024, on a dense model
// and a MoE.
TEST_CASE("CUDA decode: the captured step equals the uncaptured one across the merge boundary", "[gpu]") {
  require_gpu();
  for (const char* shape : {"tiny-qwen3", "tiny-qwen3moe"}) {
    INFO(shape);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions graph_opt;
    graph_opt.n_ctx = 1100;  // 9 splits of 128: the merge kernel is part of the long regime
    engine::SessionOptions plain_opt = graph_opt;
    plain_opt.cuda_graph = false;
    auto graph = engine::Session::create(model, graph_opt);
    auto plain = engine::Session::create(model, plain_opt);
    REQUIRE(graph.ok());
    REQUIRE(plain.ok());
    std::mt19937 rng(9);
    const int from = 1024 - 8;  // cuda::kFlashDecodeMergeFrom (8 splits of 128) - 8
    std::vector<int32_t> prompt(static_cast<size_t>(from));
    for (auto& t : prompt) t = static_cast<int32_t>(rng() % V);
    REQUIRE((*graph)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    REQUIRE((*plain)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    std::vector<float> a = logits_of(**graph), b = logits_of(**plain);
    CHECK(a == b);
    for (int step = 0; step < 16; ++step) {  // positions 1,016 .. 1,031
      const int32_t t = argmax(b.data() + b.size() - size_t(V), V);
      REQUIRE((*graph)->prefill(&t, 1, false).ok());
      REQUIRE((*plain)->prefill(&t, 1, false).ok());
      a = logits_of(**graph);
      b = logits_of(**plain);
      CHECK(a == b);
    }
  }
}

// The expansion one GEMM ahead (a side stream, two scratch buffers) changes when the weights are
// expanded, never what the GEMM reads: every prompt row's logits are bit-identical to the in-line
// expansion, on a dense model, the hybrid (delta-net products on the plan) and a MoE (experts
// expanded off the plan between planned groups), over passes of 512, 5 and 300 tokens.
TEST_CASE("CUDA prefill: expanding weights ahead equals expanding them in line", "[gpu]") {
  require_gpu();
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35", "tiny-qwen3moe-all"}) {
    INFO(shape);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions inline_opt;
    inline_opt.expand_ahead = false;
    auto ahead = engine::Session::create(model, {});
    auto in_line = engine::Session::create(model, inline_opt);
    REQUIRE(ahead.ok());
    REQUIRE(in_line.ok());
    std::mt19937 rng(5);
    std::vector<int32_t> prompt(817);
    for (auto& t : prompt) t = static_cast<int32_t>(rng() % V);
    for (auto [at, n] : {std::pair{0, 517}, std::pair{517, 300}}) {
      REQUIRE((*ahead)->prefill(prompt.data() + at, n, true).ok());
      REQUIRE((*in_line)->prefill(prompt.data() + at, n, true).ok());
      const std::vector<float> a = logits_of(**ahead), b = logits_of(**in_line);
      REQUIRE(a.size() == size_t(n) * V);
      CHECK(a == b);
    }
  }
}

// CPU only (hidden; "[cpu-diag]"): the CPU reference against itself with int8-rounded product
// inputs, on the quantized MoE and hybrid models: how much of the GPU's divergence the activation
// rounding alone explains.
TEST_CASE("CPU reference with int8 activations vs f32 activations on MoE and hybrid synthetic models", "[.][cpu-diag]") {
  for (const char* shape : {"tiny-qwen3", "tiny-qwen3moe", "tiny-qwen35", "tiny-qwen35moe"})
    for (const char* quant : {"Q8_0", "Q4_K_M"}) {
      const CaseResult r = gpu_vs_cpu(shape, quant, 5e-2, kCpu, kCpuInt8);
      CHECK(std::isfinite(r.worst_prefill));
    }
}

// Top-k sampling on the device (cuda::sample_top_k, one draw of the session's sampler per token)
// against sampling::Sampler over the same GPU logits with the same seed: identical tokens over two
// decode calls; then a decode with penalties (host path) continues the same random stream, which
// checks that the device's pending choice gave its draw back. A dense model and a hybrid.
TEST_CASE("CUDA top-k sampling on the device equals the host sampler", "[gpu]") {
  require_gpu();
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) {
    INFO(shape);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions so;
    so.seed = 4242;
    auto dev = engine::Session::create(model, so);
    auto host = engine::Session::create(model, so);
    REQUIRE(dev.ok());
    REQUIRE(host.ok());
    sampling::Params p;
    p.temperature = 0.9f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.02f;
    sampling::Params penalized = p;
    penalized.repeat_penalty = 1.3f;
    std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64};
    REQUIRE((*dev)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    REQUIRE((*host)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    std::vector<int32_t> got(28);
    engine::DecodeResult res;
    REQUIRE((*dev)->decode(p, std::nullopt, true, got.data(), 16, &res).ok());
    REQUIRE(res.n_tokens == 16);
    REQUIRE((*dev)->decode(p, std::nullopt, true, got.data() + 16, 8, &res).ok());
    REQUIRE(res.n_tokens == 8);
    REQUIRE((*dev)->decode(penalized, std::nullopt, true, got.data() + 24, 4, &res).ok());
    REQUIRE(res.n_tokens == 4);
    sampling::Sampler ref(so.seed);
    std::vector<int32_t> history = prompt, want;
    for (int i = 0; i < 28; ++i) {
      const int32_t t = ref.sample(logits_of(**host).data(), V, i < 24 ? p : penalized, history);
      want.push_back(t);
      history.push_back(t);
      REQUIRE((*host)->prefill(&t, 1, false).ok());
    }
    CHECK(got == want);
  }
}

// Run-ahead decoding on the device (each step queued before the host reads the token of the one
// before; a step fed a stop token held: the delta nets keep their state, the logits of the step
// before are saved) against the serial device path (RunnerOptions::run_ahead off): the same tokens
// to the stop, greedy and sampled, the same logits after it, the same tokens after that, a full
// context; on a dense model, the hybrid and a MoE. (The unstopped runs of the cases above run ahead
// too, against the host's argmax and sampler.)
TEST_CASE("CUDA run-ahead decoding stops where the serial decode stops", "[gpu]") {
  require_gpu();
  engine::SessionOptions ahead, serial;
  ahead.seed = serial.seed = 5;
  serial.run_ahead = false;
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35", "tiny-qwen3moe"})
    test::check_stop_runs(shape, "Q4_K_M", 0, ahead, serial);
}

// Run-ahead decoding across position 1,024, where the queue moves from the short-history graph to
// the one with flash decode's merge launch (captured then, with a step still queued): the same
// greedy tokens as the serial decode, on a dense model and a MoE.
TEST_CASE("CUDA run-ahead decoding across the merge boundary equals the serial decode", "[gpu]") {
  require_gpu();
  for (const char* shape : {"tiny-qwen3", "tiny-qwen3moe"}) {
    INFO(shape);
    auto model = open_synthetic(shape, "Q4_K_M", 0);
    const int V = model->graph().n_vocab;
    engine::SessionOptions ahead_opt;
    ahead_opt.n_ctx = 1100;
    engine::SessionOptions serial_opt = ahead_opt;
    serial_opt.run_ahead = false;
    auto ahead = engine::Session::create(model, ahead_opt);
    auto serial = engine::Session::create(model, serial_opt);
    REQUIRE(ahead.ok());
    REQUIRE(serial.ok());
    std::mt19937 rng(11);
    std::vector<int32_t> prompt(1024 - 6);
    for (auto& t : prompt) t = static_cast<int32_t>(rng() % V);
    std::vector<int32_t> got[2] = {std::vector<int32_t>(16), std::vector<int32_t>(16)};
    for (int s = 0; s < 2; ++s) {
      engine::Session& ses = s == 0 ? **ahead : **serial;
      REQUIRE(ses.prefill(prompt.data(), int32_t(prompt.size()), false).ok());
      engine::DecodeResult res;
      REQUIRE(ses.decode(sampling::Params{}, std::nullopt, true, got[s].data(), 16, &res).ok());
      REQUIRE(res.n_tokens == 16);
    }
    CHECK(got[0] == got[1]);
    CHECK(logits_of(**ahead) == logits_of(**serial));
  }
}
