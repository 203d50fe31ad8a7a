// bw24-kernel-check, the attention kernels over every cache type (f32, f16, bf16, q8_0, q4_0, fp8):
// q/k norm + RoPE + KV store, attention v1 and flash decode, flash prefill.
#include "tools/kernel_check/check.h"

namespace bw24::kcheck {
namespace {

// KV cache contents as the device keeps them (cuda/ops/ops.cuh KvDtype): f32; f16, bf16 and fp8
// (lib/core's conversions); q8_0 / q4_0 from lib/quant's quantizers, their blocks split into the
// device's planes (all quants, then all f16 scales; q4_0 nibbles in element order). v: [n][width]
// values, width % 32 == 0 for the block types.
std::vector<uint8_t> cache_bytes(const std::vector<float>& v, cuda::KvDtype kv) {
  const size_t n = v.size(), blocks = n / 32;
  if (kv == cuda::KvDtype::kQ8_0 || kv == cuda::KvDtype::kQ4_0) {
    const bool q8 = kv == cuda::KvDtype::kQ8_0;
    const size_t bb = q8 ? 34 : 18, qbytes = q8 ? n : n / 2;
    std::vector<uint8_t> file(blocks * bb), out(qbytes + blocks * 2);
    quant::traits(q8 ? GgmlType::Q8_0 : GgmlType::Q4_0)->quantize(v.data(), file.data(), int64_t(n));
    for (size_t b = 0; b < blocks; ++b) {
      const uint8_t* blk = &file[bb * b];
      std::memcpy(&out[qbytes + 2 * b], blk, 2);
      if (q8) {
        std::memcpy(&out[32 * b], blk + 2, 32);
        continue;
      }
      for (int e = 0; e < 32; e += 2) {  // element e: qs[e] low nibble (e < 16) or qs[e - 16] high
        auto q = [&](int x) { return x < 16 ? blk[2 + x] & 15 : blk[2 + x - 16] >> 4; };
        out[16 * b + e / 2] = static_cast<uint8_t>(q(e) | (q(e + 1) << 4));
      }
    }
    return out;
  }
  const size_t es = kv == cuda::KvDtype::kF32 ? 4 : kv == cuda::KvDtype::kFp8E4M3 ? 1 : 2;
  std::vector<uint8_t> out(n * es);
  for (size_t i = 0; i < n; ++i) {
    if (kv == cuda::KvDtype::kF32) {
      std::memcpy(&out[4 * i], &v[i], 4);
    } else if (kv == cuda::KvDtype::kFp8E4M3) {
      out[i] = f32_to_fp8_e4m3(v[i]);
    } else {
      const uint16_t h = kv == cuda::KvDtype::kF16 ? f32_to_fp16(v[i]) : f32_to_bf16(v[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// The values of n cache elements in bytes b.
std::vector<float> cache_values(const std::vector<uint8_t>& b, size_t n, cuda::KvDtype kv) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    switch (kv) {
      case cuda::KvDtype::kQ8_0:
        std::memcpy(&h, &b[n + 2 * (i / 32)], 2);
        out[i] = fp16_to_f32(h) * static_cast<float>(static_cast<int8_t>(b[i]));
        break;
      case cuda::KvDtype::kQ4_0:
        std::memcpy(&h, &b[n / 2 + 2 * (i / 32)], 2);
        out[i] = fp16_to_f32(h) * static_cast<float>(((b[i / 2] >> (4 * (i % 2))) & 15) - 8);
        break;
      case cuda::KvDtype::kF16:
      case cuda::KvDtype::kBF16:
        std::memcpy(&h, &b[2 * i], 2);
        out[i] = kv == cuda::KvDtype::kF16 ? fp16_to_f32(h) : bf16_to_f32(h);
        break;
      case cuda::KvDtype::kFp8E4M3: out[i] = fp8_e4m3_to_f32(b[i]); break;
      case cuda::KvDtype::kF32: std::memcpy(&out[i], &b[4 * i], 4); break;
    }
  }
  return out;
}

// The values a cache of type kv holds for v.
std::vector<float> round_kv(const std::vector<float>& v, cuda::KvDtype kv) {
  return kv == cuda::KvDtype::kF32 ? v : cache_values(cache_bytes(v, kv), v.size(), kv);
}

const char* kv_name(cuda::KvDtype kv) {
  switch (kv) {
    case cuda::KvDtype::kF16: return "f16";
    case cuda::KvDtype::kBF16: return "bf16";
    case cuda::KvDtype::kQ8_0: return "q8_0";
    case cuda::KvDtype::kQ4_0: return "q4_0";
    case cuda::KvDtype::kFp8E4M3: return "fp8";
    case cuda::KvDtype::kF32: break;
  }
  return "f32";
}

// K and V cache types: each type for both, and three mixed pairs (the run-time typed loader).
struct KvPair {
  cuda::KvDtype k, v;
  bool blocked() const { return cuda::kv_blocked(k) || cuda::kv_blocked(v); }
  std::string name() const { return k == v ? kv_name(k) : std::string(kv_name(k)) + "/" + kv_name(v); }
};
using KD = cuda::KvDtype;
constexpr KvPair kKvPairs[] = {{KD::kF32, KD::kF32},   {KD::kF16, KD::kF16},  {KD::kQ8_0, KD::kQ8_0},
                               {KD::kBF16, KD::kBF16}, {KD::kQ4_0, KD::kQ4_0}, {KD::kFp8E4M3, KD::kFp8E4M3},
                               {KD::kQ8_0, KD::kF16},  {KD::kFp8E4M3, KD::kQ4_0}, {KD::kBF16, KD::kF32}};

// One attention test case: random q and cache (f16: values rounded as the device stores them),
// the reference output (ref::attend_head per token and head) and the cache bytes to upload.
struct AttnCase {
  int n_head, n_head_kv, D;
  int64_t pos0;
  int nt, window;
  std::string name(const KvPair& kv) const {
    return "heads " + std::to_string(n_head) + "/" + std::to_string(n_head_kv) + " D " + std::to_string(D) + " pos " +
           std::to_string(pos0) + " " + std::to_string(nt) + " tok" +
           (window ? " window " + std::to_string(window) : "") + " " + kv.name();
  }
};

struct AttnData {
  std::vector<float> q, ref;
  std::vector<uint8_t> kb, vb;
  float scale;
};

AttnData attention_data(std::mt19937& rng, const AttnCase& c, int n_ctx, const KvPair& kv) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int kvw = c.n_head_kv * c.D;
  std::vector<float> q(size_t(c.nt) * c.n_head * c.D), kc(size_t(n_ctx) * kvw), vc(kc.size());
  for (auto* vec : {&q, &kc, &vc})
    for (auto& x : *vec) x = nd(rng);
  kc = round_kv(kc, kv.k);  // the reference reads what the cache holds
  vc = round_kv(vc, kv.v);
  AttnData d{q, std::vector<float>(q.size()), cache_bytes(kc, kv.k), cache_bytes(vc, kv.v),
             1.0f / std::sqrt(static_cast<float>(c.D))};
  std::vector<float> scratch(static_cast<size_t>(n_ctx));
  for (int t = 0; t < c.nt; ++t)
    for (int h = 0; h < c.n_head; ++h) {
      const int64_t p = c.pos0 + t, first = c.window > 0 ? std::max<int64_t>(0, p - c.window + 1) : 0;
      const int g = h / (c.n_head / c.n_head_kv);
      ref::attend_head(&d.ref[(size_t(t) * c.n_head + h) * c.D], &q[(size_t(t) * c.n_head + h) * c.D], &kc[g * c.D], kvw,
                       &vc[g * c.D], kvw, first, p, c.D, d.scale, scratch.data());
    }
  return d;
}

// qk_rope_store's arguments over a check's device buffers (theta 1e6, eps 1e-6; norms where set).
cuda::QkRopeArgs rope_args(int n_head, int n_head_kv, int head_dim, int rope_dims, bool neox, const KvPair& kv,
                           int64_t n_ctx, float* q, const float* k, const float* v, void* k_cache, void* v_cache,
                           const float* q_norm, const float* k_norm, const double* inv_freq, cuda::DevicePos pos) {
  cuda::QkRopeArgs a{};
  a.q = q;
  a.k = k;
  a.v = v;
  a.k_cache = k_cache;
  a.v_cache = v_cache;
  a.kv_type = cuda::KvTypes(kv.k, kv.v);
  a.n_ctx = n_ctx;
  a.q_norm = q_norm;
  a.k_norm = k_norm;
  a.eps = 1e-6f;
  a.n_head = n_head;
  a.n_head_kv = n_head_kv;
  a.head_dim = head_dim;
  a.rope_dims = rope_dims;
  a.theta = 1e6f;
  a.inv_freq = inv_freq;
  a.neox = neox;
  a.pos = pos;
  return a;
}

}  // namespace

// qk_rope_store against ref::rmsnorm + ref::rope, at a position read from device memory, into an
// f32 and an f16 cache (f16: against the reference rounded to f16; a value within an ulp of a
// rounding boundary may round the other way, hence 1e-3).
void check_qk_rope(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int n_head, n_head_kv, head_dim, rope_dims;
    bool neox, norm;
  };
  for (Case c : {Case{32, 8, 128, 128, true, true}, Case{4, 1, 256, 256, true, true}, Case{8, 8, 64, 64, false, false},
                 Case{6, 2, 80, 32, false, true}}) {
    for (int nt : {1, 3}) for (const KvPair& kv : kKvPairs) {
      if (kv.blocked() && c.head_dim % 32 != 0) continue;
      const int64_t pos0 = 1000, n_ctx = pos0 + nt;
      const int D = c.head_dim, kvw = c.n_head_kv * D;
      const size_t k_size = size_t(cuda::kv_cache_bytes(kv.k, n_ctx, kvw)), v_size = size_t(cuda::kv_cache_bytes(kv.v, n_ctx, kvw));
      std::vector<float> q(size_t(nt) * c.n_head * D), k(size_t(nt) * kvw), v(k.size()), qn(D), kn(D);
      for (auto* vec : {&q, &k, &v, &qn, &kn})
        for (auto& x : *vec) x = nd(rng);
      std::vector<float> rq = q, rk = k;
      for (int t = 0; t < nt; ++t) {
        for (int h = 0; h < c.n_head; ++h) {
          float* p = &rq[(size_t(t) * c.n_head + h) * D];
          if (c.norm) ref::rmsnorm(p, p, qn.data(), D, 1e-6f, false);
          ref::rope(p, c.rope_dims, pos0 + t, 1e6f, c.neox);
        }
        for (int h = 0; h < c.n_head_kv; ++h) {
          float* p = &rk[size_t(t) * kvw + h * D];
          if (c.norm) ref::rmsnorm(p, p, kn.data(), D, 1e-6f, false);
          ref::rope(p, c.rope_dims, pos0 + t, 1e6f, c.neox);
        }
      }
      DeviceBuffer<float> dq(q.size()), dk(k.size()), dv(v.size()), dqn(D), dkn(D);
      DeviceBuffer<uint8_t> kc(k_size), vc(v_size);
      DeviceBuffer<int64_t> dpos(1);
      upload(dq, q);
      upload(dk, k);
      upload(dv, v);
      upload(dqn, qn);
      upload(dkn, kn);
      upload(dpos, std::vector<int64_t>{pos0 - 7});
      cudaMemset(kc.p, 0xff, k_size);
      cudaMemset(vc.p, 0xff, v_size);
      // One token takes the frequency table the runner uploads, three compute it in place.
      std::vector<double> freq(size_t(std::max(1, c.rope_dims / 2)));
      for (int i = 0; i < c.rope_dims / 2; ++i) freq[size_t(i)] = std::pow(1e6, -2.0 * i / c.rope_dims);
      DeviceBuffer<double> dfreq(freq.size());
      upload(dfreq, freq);
      const cuda::QkRopeArgs a = rope_args(c.n_head, c.n_head_kv, D, c.rope_dims, c.neox, kv, n_ctx, dq.p, dk.p, dv.p, kc.p,
                                           vc.p, c.norm ? dqn.p : nullptr, c.norm ? dkn.p : nullptr,
                                           nt == 1 ? dfreq.p : nullptr, cuda::DevicePos{dpos.p, 7});
      bool good = ok(cuda::qk_rope_store(a, nt, nullptr), "qk_rope_store") && ok(cudaDeviceSynchronize(), "sync");
      const size_t elems = size_t(n_ctx) * kvw;
      const std::vector<float> gq = download(dq, q.size()), gkc = cache_values(download(kc, k_size), elems, kv.k),
                               gvc = cache_values(download(vc, v_size), elems, kv.v);
      const std::vector<float> gk(gkc.begin() + pos0 * kvw, gkc.end()), gv(gvc.begin() + pos0 * kvw, gvc.end());
      // V goes into the cache unchanged: its stored form must equal the host codec's exactly (the
      // device's q8_0 / q4_0 / fp8 / bf16 rounding is lib/quant's and lib/core's). K is rotated on
      // both sides (fp32 RoPE a few ulps apart), so a rare element may round the other way.
      const bool v_exact = gv == round_kv(v, kv.v);
      const double e = std::max({nerr(gq, rq), nerr(gk, round_kv(rk, kv.k)), nerr(gv, round_kv(v, kv.v))});
      const KD kt = kv.k;  // the tolerance is K's (V is exact)
      const double tol = kt == KD::kF32 ? 1e-5 : kt == KD::kF16 ? 1e-3 : kt == KD::kBF16 || kt == KD::kQ8_0 ? 5e-3 : 2e-2;
      good = good && v_exact && e < tol;
      report(r, good, nt == 1, "qk_rope_store " + kv.name(),
             "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                 " rope " + std::to_string(c.rope_dims) + (c.neox ? " neox" : "") + ", " + std::to_string(nt) + " tok",
             e);
    }
  }
}

// Decode attention against ref::attend_head, GQA, causal, windowed, every cache type (the
// reference reads the same rounded values): version 1 (any head size) and split-K flash decode
// (64/128/256, across split boundaries; position 17,000, 133 visible splits, walks the merge
// kernel's later (m, l) rounds and runs of partials).
void check_attention(std::mt19937& rng, Result& r) {
  for (AttnCase c : {AttnCase{32, 8, 128, 0, 1, 0}, AttnCase{32, 8, 128, 700, 1, 0}, AttnCase{32, 8, 128, 300, 8, 0},
                     AttnCase{32, 4, 128, 50, 1, 0}, AttnCase{16, 4, 256, 90, 3, 0},
                     AttnCase{4, 1, 256, 1000, 3, 512}, AttnCase{6, 2, 80, 37, 2, 0}, AttnCase{16, 2, 64, 4095, 2, 0},
                     AttnCase{64, 8, 128, 1536, 1, 300}, AttnCase{32, 8, 128, 4200, 1, 0},
                     AttnCase{8, 2, 256, 2100, 2, 0}, AttnCase{8, 2, 128, 17000, 1, 0}}) {
    for (const KvPair& kv : kKvPairs) {
      if (kv.blocked() && c.D % 32 != 0) continue;
      const int n_ctx = static_cast<int>(c.pos0) + c.nt + 100;  // slack: splits past the end
      const AttnData d = attention_data(rng, c, n_ctx, kv);
      DeviceBuffer<float> dq(d.q.size()), dout(d.q.size()), dscores(size_t(c.nt) * c.n_head * n_ctx),
          dflash(size_t(cuda::flash_decode_scratch(n_ctx, c.nt, c.n_head, c.D)));
      DeviceBuffer<uint8_t> dk(d.kb.size()), dv(d.vb.size());
      upload(dq, d.q);
      upload(dk, d.kb);
      upload(dv, d.vb);
      cuda::flash_decode_init_scratch(dflash.p);  // once per case: each call leaves the counters at zero
      for (bool flash : {false, true}) {
        if (flash && !cuda::flash_decode_supports(c.D, c.n_head, c.n_head_kv)) continue;
        cudaMemset(dout.p, 0xff, d.q.size() * 4);
        const cuda::DevicePos pos{nullptr, c.pos0};
        const cudaError_t e0 =
            flash ? cuda::flash_decode(dout.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dflash.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                       c.window, d.scale, n_ctx, nullptr, nullptr, {}, -1, 0, /*history_ready=*/true)
                  : cuda::attention(dout.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dscores.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                    c.window, d.scale, n_ctx, nullptr);
        bool good = ok(e0, "attention") && ok(cudaDeviceSynchronize(), "attention sync");
        const double e = nerr(download(dout, d.q.size()), d.ref);
        good = good && e < 1e-5;
        report(r, good, true, flash ? "flash_decode" : "attention", c.name(kv), e);
        if (!flash) continue;
        // The same call writing O also as the O projection's int8 input: O the same bits, q8 and
        // ds those of rmsnorm_q8 without a norm over it (single split, inline merge, merge kernel).
        // It leaves history_ready false: the keys read after the PDL wait, the same bits.
        const size_t n_o = d.q.size();
        DeviceBuffer<float> out2(n_o);
        DeviceBuffer<int8_t> q8(n_o), q8_ref(n_o);
        DeviceBuffer<float2> ds(n_o / 32), ds_ref(n_o / 32);
        const bool ran =
            ok(cuda::flash_decode(out2.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dflash.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                  c.window, d.scale, n_ctx, nullptr, nullptr, cuda::OutEpilogue{q8.p, ds.p}),
               "flash_decode int8 O") &&
            ok(cuda::rmsnorm_q8(nullptr, q8_ref.p, ds_ref.p, dout.p, nullptr, c.nt, c.n_head * c.D, 1e-6f, false, nullptr),
               "rmsnorm_q8") &&
            ok(cudaDeviceSynchronize(), "flash_decode int8 O sync");
        const bool same = same_bits(download(dout, n_o), download(out2, n_o)) &&
                          same_bits(download(q8, n_o), download(q8_ref, n_o)) &&
                          same_bits(download(ds, n_o / 32), download(ds_ref, n_o / 32));
        report(r, ran && same, true, "flash_decode + int8 O input (bits)", c.name(kv), same ? 0.0 : 1.0);
        // Every head grouping (a KV head's query heads over 1, 2, 4 or 8 CTAs a split) against the
        // call's own choice: the same bits.
        const std::vector<float> o_auto = download(dout, n_o);
        std::string tried;
        bool all_same = true, all_ran = true;
        for (int groups = 1; groups <= c.n_head / c.n_head_kv; groups *= 2) {
          if ((c.n_head / c.n_head_kv) % groups != 0) continue;
          cudaMemset(out2.p, 0xff, n_o * 4);
          all_ran = all_ran &&
                    ok(cuda::flash_decode(out2.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dflash.p, c.nt, c.n_head, c.n_head_kv,
                                          c.D, pos, c.window, d.scale, n_ctx, nullptr, nullptr, {}, -1, groups, true),
                       "flash_decode head groups") &&
                    ok(cudaDeviceSynchronize(), "flash_decode head groups sync");
          const bool same_g = same_bits(o_auto, download(out2, n_o));
          all_same = all_same && same_g;
          tried += ' ';  // appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "x" + to_string()
          tried += std::to_string(groups);
          if (!same_g) tried += "(differs)";
        }
        report(r, all_ran && all_same, true, "flash_decode head groups (bits)", c.name(kv) + ", groups" + tried,
               all_same ? 0.0 : 1.0);
      }
    }
  }
}

// flash_decode told a bound on its device positions (max_pos below kFlashDecodeMergeFrom: no merge
// launch) against the same call without one (the merge kernel launched, every CTA exiting): the
// same bits, at n_ctx 4,616 (37 splits), one and three tokens ending at positions 2, 702 and 1,023.
void check_flash_decode_bound(std::mt19937& rng, Result& r) {
  const KvPair kv{KD::kF16, KD::kF16};
  for (int64_t pos0 : {int64_t{0}, int64_t{700}, cuda::kFlashDecodeMergeFrom - 3})
    for (int nt : {1, 3}) {
      const AttnCase c{32, 8, 128, pos0 + 3 - nt, nt, 0};  // tokens ending at pos0 + 2
      const int n_ctx = 4616;
      const AttnData d = attention_data(rng, c, n_ctx, kv);
      DeviceBuffer<float> dq(d.q.size()), o1(d.q.size()), o2(d.q.size()),
          dflash(size_t(cuda::flash_decode_scratch(n_ctx, c.nt, c.n_head, c.D)));
      DeviceBuffer<uint8_t> dk(d.kb.size()), dv(d.vb.size());
      DeviceBuffer<int64_t> dpos(1);
      upload(dq, d.q);
      upload(dk, d.kb);
      upload(dv, d.vb);
      upload(dpos, std::vector<int64_t>{c.pos0});
      cuda::flash_decode_init_scratch(dflash.p);
      const cuda::DevicePos pos{dpos.p, 0};
      const int64_t last = c.pos0 + c.nt - 1;
      const bool ran =
          last < cuda::kFlashDecodeMergeFrom &&
          ok(cuda::flash_decode(o1.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dflash.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                c.window, d.scale, n_ctx, nullptr),
             "flash_decode") &&
          ok(cuda::flash_decode(o2.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, dflash.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                c.window, d.scale, n_ctx, nullptr, nullptr, {}, cuda::kFlashDecodeMergeFrom - 1),
             "flash_decode max_pos") &&
          ok(cudaDeviceSynchronize(), "flash_decode max_pos sync");
      const std::vector<float> a = download(o1, d.q.size()), b = download(o2, d.q.size());
      const bool same = same_bits(a, b);
      report(r, ran && same && nerr(a, d.ref) < 1e-5, true, "flash_decode max_pos (bits)", c.name(kv), nerr(b, d.ref));
    }
}

// flash_decode with qk_rope_store's work fused (one token, QkRopeArgs) against the two launches:
// the output bit-equal and both caches byte-equal (one code path, cuda/ops/rope.cuh), at positions
// where the new key lands in the first and in a later split, merged inline and by the merge kernel,
// q/k norms on and off, partial rotary, every cache pair.
void check_flash_decode_rope(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int n_head, n_head_kv, D, rope_dims;
    bool neox, norm;
    int64_t pos;
    int window;
  };
  for (Case c : {Case{32, 8, 128, 128, true, true, 77, 0}, Case{32, 8, 128, 128, true, true, 4200, 0},
                 Case{32, 4, 128, 128, true, true, 700, 0}, Case{16, 2, 64, 64, false, false, 1500, 0},
                 Case{8, 2, 256, 64, true, true, 2100, 300}}) {
    for (const KvPair& kv : kKvPairs) {
      const int D = c.D, kvw = c.n_head_kv * D, n_ctx = static_cast<int>(c.pos) + 100;
      const size_t k_size = size_t(cuda::kv_cache_bytes(kv.k, n_ctx, kvw)), v_size = size_t(cuda::kv_cache_bytes(kv.v, n_ctx, kvw));
      // Earlier positions: random values as the cache holds them; the token's raw q, k, v.
      std::vector<float> kc(size_t(n_ctx) * kvw), vc(kc.size()), q(size_t(c.n_head) * D), k(kvw), v(kvw), qn(D), kn(D);
      for (auto* vec : {&kc, &vc, &q, &k, &v}) for (auto& x : *vec) x = nd(rng);
      for (auto& x : qn) x = 1.0f + 0.1f * nd(rng);
      for (auto& x : kn) x = 1.0f + 0.1f * nd(rng);
      const std::vector<uint8_t> kb = cache_bytes(round_kv(kc, kv.k), kv.k), vb = cache_bytes(round_kv(vc, kv.v), kv.v);
      std::vector<double> freq(size_t(c.rope_dims / 2));
      for (int i = 0; i < c.rope_dims / 2; ++i) freq[size_t(i)] = std::pow(1e6, -2.0 * i / c.rope_dims);
      DeviceBuffer<float> dq(q.size()), dk(k.size()), dv(v.size()), dqn(D), dkn(D), dout(q.size()), dout2(q.size()),
          dscratch(size_t(cuda::flash_decode_scratch(n_ctx, 1, c.n_head, D)));
      DeviceBuffer<double> dfreq(freq.size());
      DeviceBuffer<uint8_t> kc1(k_size), vc1(v_size), kc2(k_size), vc2(v_size);
      DeviceBuffer<int64_t> dpos(1);
      upload(dk, k);
      upload(dv, v);
      upload(dqn, qn);
      upload(dkn, kn);
      upload(dfreq, freq);
      upload(dpos, std::vector<int64_t>{c.pos - 5});
      cuda::flash_decode_init_scratch(dscratch.p);
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      auto args = [&](DeviceBuffer<uint8_t>& kcache, DeviceBuffer<uint8_t>& vcache) {
        return rope_args(c.n_head, c.n_head_kv, D, c.rope_dims, c.neox, kv, n_ctx, dq.p, dk.p, dv.p, kcache.p, vcache.p,
                         c.norm ? dqn.p : nullptr, c.norm ? dkn.p : nullptr, dfreq.p, cuda::DevicePos{dpos.p, 5});
      };
      // The two launches: qk_rope_store rotates q in place and writes the caches, then flash_decode.
      upload(dq, q);
      upload(kc1, kb);
      upload(vc1, vb);
      const cuda::QkRopeArgs a1 = args(kc1, vc1);
      bool good = ok(cuda::qk_rope_store(a1, 1, nullptr), "qk_rope_store") &&
                  ok(cuda::flash_decode(dout.p, dq.p, kc1.p, vc1.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head, c.n_head_kv, D,
                                        a1.pos, c.window, scale, n_ctx, nullptr),
                     "flash_decode") &&
                  ok(cudaDeviceSynchronize(), "sync");
      // Fused: raw q again, fresh caches.
      upload(dq, q);
      upload(kc2, kb);
      upload(vc2, vb);
      const cuda::QkRopeArgs a2 = args(kc2, vc2);
      good = good &&
             ok(cuda::flash_decode(dout2.p, dq.p, kc2.p, vc2.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head, c.n_head_kv, D,
                                   a2.pos, c.window, scale, n_ctx, nullptr, &a2, {}, -1, 0, /*history_ready=*/true),
                "flash_decode fused") &&
             ok(cudaDeviceSynchronize(), "sync");
      const std::vector<float> o1 = download(dout, q.size()), o2 = download(dout2, q.size());
      const bool same_out = o1 == o2;
      const bool same_cache = download(kc1, k_size) == download(kc2, k_size) && download(vc1, v_size) == download(vc2, v_size);
      good = good && same_out && same_cache;
      report(r, good, true, "flash_decode + rope fused",
             "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) + " rope " +
                 std::to_string(c.rope_dims) + (c.norm ? " norm" : "") + " pos " + std::to_string(c.pos) +
                 (c.window ? " window " + std::to_string(c.window) : "") + " " + kv.name() +
                 (same_out ? "" : ", output differs") + (same_cache ? "" : ", cache differs"),
             nerr(o2, o1));
      // Fused, one CTA a KV head and one a query head (every group's CTA at the position's split
      // writes the key and value): the auto call's output and caches.
      for (int groups : {1, c.n_head / c.n_head_kv}) {
        DeviceBuffer<float> dout4(q.size());
        DeviceBuffer<uint8_t> kc4(k_size), vc4(v_size);
        upload(dq, q);
        upload(kc4, kb);
        upload(vc4, vb);
        const cuda::QkRopeArgs a4 = args(kc4, vc4);
        const bool ran4 = ok(cuda::flash_decode(dout4.p, dq.p, kc4.p, vc4.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head,
                                                c.n_head_kv, D, a4.pos, c.window, scale, n_ctx, nullptr, &a4, {}, -1, groups,
                                                true),
                             "flash_decode fused, head groups") &&
                          ok(cudaDeviceSynchronize(), "sync");
        const bool same4 = download(dout4, q.size()) == o2 && download(kc4, k_size) == download(kc2, k_size) &&
                           download(vc4, v_size) == download(vc2, v_size);
        report(r, ran4 && same4, true, "flash_decode + rope fused, head groups (bits)",
               "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                   " pos " + std::to_string(c.pos) + " " + kv.name() + ", groups " + std::to_string(groups),
               same4 ? 0.0 : 1.0);
      }
      // A fused launch's int8 O input and scales the same bits as the reference's (the two launches then
      // rmsnorm_q8), and its caches the same bytes as the two launches' (kc1, vc1).
      auto same_step = [&](const DeviceBuffer<int8_t>& q8o, const DeviceBuffer<float2>& dso,
                           const DeviceBuffer<int8_t>& q8o_ref, const DeviceBuffer<float2>& dso_ref,
                           const DeviceBuffer<uint8_t>& kcx, const DeviceBuffer<uint8_t>& vcx) {
        return download(q8o, q.size()) == download(q8o_ref, q.size()) &&
               same_bits(download(dso, q.size() / 32), download(dso_ref, q.size() / 32)) &&
               download(kcx, k_size) == download(kc1, k_size) && download(vcx, v_size) == download(vc1, v_size);
      };
      // The int8 O input of a Qwen3 step (OutEpilogue without a gate), the auto grouping and one CTA a
      // KV head (the decode-step instances of one, four and eight heads, kQ8Step at D = 128), against the
      // two launches' output then rmsnorm_q8 without a norm: the same bits, and the same caches.
      for (int groups : {0, 1}) {
        DeviceBuffer<float> dout5(q.size());
        DeviceBuffer<uint8_t> kc5(k_size), vc5(v_size);
        DeviceBuffer<int8_t> q8o(q.size()), q8o_ref(q.size());
        DeviceBuffer<float2> dso(q.size() / 32), dso_ref(q.size() / 32);
        upload(dq, q);
        upload(kc5, kb);
        upload(vc5, vb);
        const cuda::QkRopeArgs a5 = args(kc5, vc5);
        const bool ran5 =
            ok(cuda::rmsnorm_q8(nullptr, q8o_ref.p, dso_ref.p, dout.p, nullptr, 1, c.n_head * D, 1e-6f, false, nullptr),
               "rmsnorm_q8") &&
            ok(cuda::flash_decode(dout5.p, dq.p, kc5.p, vc5.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head, c.n_head_kv, D,
                                  a5.pos, c.window, scale, n_ctx, nullptr, &a5, cuda::OutEpilogue{q8o.p, dso.p}, -1,
                                  groups, true),
               "flash_decode int8 O") &&
            ok(cudaDeviceSynchronize(), "sync");
        const std::vector<float> o5 = download(dout5, q.size());
        const bool same5 = o5 == o1 && same_step(q8o, dso, q8o_ref, dso_ref, kc5, vc5);
        report(r, ran5 && same5, true, "flash_decode + rope + int8 O fused (bits)",
               "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                   " pos " + std::to_string(c.pos) + " " + kv.name() + ", groups " + std::to_string(groups),
               nerr(o5, o1));
      }
      // The angles from rope_table (QkRopeArgs::angles: a one-token step's row, loaded after the PDL
      // wait instead of computed before it): the same bits as the two launches, the int8 O too. The
      // table has a row before the case's (another rope configuration), so the row's offset counts.
      {
        const int64_t stride = c.rope_dims / 2 + 3;
        const std::vector<cuda::RopeTableLayer> layers{{nullptr, 1e4f, 32}, {dfreq.p, 0.0f, c.rope_dims}};
        DeviceBuffer<cuda::RopeTableLayer> dlayers(layers.size());
        DeviceBuffer<float2> dtab(size_t(2 * stride));
        DeviceBuffer<float> dout6(q.size());
        DeviceBuffer<uint8_t> kc6(k_size), vc6(v_size);
        DeviceBuffer<int8_t> q8o(q.size()), q8o_ref(q.size());
        DeviceBuffer<float2> dso(q.size() / 32), dso_ref(q.size() / 32);
        bool ran6 = ok(cudaMemcpy(dlayers.p, layers.data(), layers.size() * sizeof(layers[0]), cudaMemcpyHostToDevice),
                       "upload rope layers");
        upload(dq, q);
        upload(kc6, kb);
        upload(vc6, vb);
        cuda::QkRopeArgs a6 = args(kc6, vc6);
        a6.angles = dtab.p + stride;
        ran6 = ran6 &&
               ok(cuda::rope_table(dtab.p, stride, dlayers.p, 2, a6.pos, nullptr), "rope_table") &&
               ok(cuda::rmsnorm_q8(nullptr, q8o_ref.p, dso_ref.p, dout.p, nullptr, 1, c.n_head * D, 1e-6f, false, nullptr),
                  "rmsnorm_q8") &&
               ok(cuda::flash_decode(dout6.p, dq.p, kc6.p, vc6.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head, c.n_head_kv, D,
                                     a6.pos, c.window, scale, n_ctx, nullptr, &a6, cuda::OutEpilogue{q8o.p, dso.p}, -1, 0,
                                     true),
                  "flash_decode rope table") &&
               ok(cudaDeviceSynchronize(), "sync");
        const std::vector<float> o6 = download(dout6, q.size());
        const bool same6 = o6 == o1 && same_step(q8o, dso, q8o_ref, dso_ref, kc6, vc6);
        report(r, ran6 && same6, true, "flash_decode + rope from rope_table (bits)",
               "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                   " rope " + std::to_string(c.rope_dims) + " pos " + std::to_string(c.pos) + " " + kv.name(),
               nerr(o6, o1));
      }
      // Gated (Qwen3.5): q read in place from the Q product's [q | gate] rows (q_stride 2 D), the
      // gate and the int8 O input applied by the O writer, against the two launches' output times
      // sigmoid(gate) (sigmoid_mul) then rmsnorm_q8: the same bits, and the same caches.
      std::vector<float> gate(q.size()), qg(2 * q.size());
      for (auto& x : gate) x = nd(rng);
      for (int h = 0; h < c.n_head; ++h) {
        std::copy_n(&q[size_t(h) * D], D, &qg[size_t(h) * 2 * D]);
        std::copy_n(&gate[size_t(h) * D], D, &qg[size_t(h) * 2 * D + D]);
      }
      DeviceBuffer<float> dqg(qg.size()), dgate(gate.size()), dout3(q.size());
      DeviceBuffer<uint8_t> kc3(k_size), vc3(v_size);
      DeviceBuffer<int8_t> q8(q.size()), q8_ref(q.size());
      DeviceBuffer<float2> ds(q.size() / 32), ds_ref(q.size() / 32);
      upload(dqg, qg);
      upload(dgate, gate);
      upload(kc3, kb);
      upload(vc3, vb);
      cuda::QkRopeArgs a3 = args(kc3, vc3);
      a3.q = dqg.p;
      a3.q_stride = 2 * D;
      const cuda::OutEpilogue ep{q8.p, ds.p, dqg.p + D, 2 * D};
      bool gated = ok(cuda::sigmoid_mul(dout.p, dgate.p, int64_t{c.n_head} * D, nullptr), "sigmoid_mul") &&
                   ok(cuda::rmsnorm_q8(nullptr, q8_ref.p, ds_ref.p, dout.p, nullptr, 1, c.n_head * D, 1e-6f, false,
                                       nullptr),
                      "rmsnorm_q8") &&
                   ok(cuda::flash_decode(dout3.p, dq.p, kc3.p, vc3.p, {kv.k, kv.v}, dscratch.p, 1, c.n_head, c.n_head_kv,
                                         D, a3.pos, c.window, scale, n_ctx, nullptr, &a3, ep),
                      "flash_decode gated") &&
                   ok(cudaDeviceSynchronize(), "sync");
      const std::vector<float> g1 = download(dout, q.size()), g3 = download(dout3, q.size());
      gated = gated && g1 == g3 && same_step(q8, ds, q8_ref, ds_ref, kc3, vc3);
      report(r, gated, true, "flash_decode + rope + gate + int8 O fused (bits)",
             "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                 " pos " + std::to_string(c.pos) + " " + kv.name(),
             nerr(g3, g1));
    }
  }
}

// Flash attention prefill against ref::attend_head (bf16 Q/K/V/P inside: normalized error < 1e-2).
void check_flash_prefill(std::mt19937& rng, Result& r) {
  for (AttnCase c : {AttnCase{32, 8, 128, 0, 512, 0}, AttnCase{32, 8, 128, 700, 100, 0}, AttnCase{4, 1, 64, 0, 77, 32},
                     AttnCase{16, 8, 128, 300, 65, 100}, AttnCase{8, 8, 64, 5, 9, 0},
                     // head size 256 (Qwen3.5 / 3.6 gated attention): Q from shared memory
                     AttnCase{16, 4, 256, 0, 512, 0}, AttnCase{16, 4, 256, 300, 65, 100}}) {
    for (const KvPair& kv : kKvPairs) {
      if (kv.blocked() && c.D % 32 != 0) continue;
      const int n_ctx = static_cast<int>(c.pos0) + c.nt;
      const AttnData d = attention_data(rng, c, n_ctx, kv);
      DeviceBuffer<float> dq(d.q.size()), dout(d.q.size());
      DeviceBuffer<uint8_t> dk(d.kb.size()), dv(d.vb.size());
      upload(dq, d.q);
      upload(dk, d.kb);
      upload(dv, d.vb);
      cudaMemset(dout.p, 0xff, d.q.size() * 4);
      bool good = ok(cuda::flash_prefill(dout.p, dq.p, dk.p, dv.p, {kv.k, kv.v}, c.nt, c.n_head, c.n_head_kv, c.D,
                                         cuda::DevicePos{nullptr, c.pos0}, c.window, d.scale, n_ctx, nullptr),
                     "flash_prefill") &&
                  ok(cudaDeviceSynchronize(), "flash sync");
      const double e = nerr(download(dout, d.q.size()), d.ref);
      good = good && e < 1e-2;
      report(r, good, true, "flash_prefill", c.name(kv), e);
    }
  }
}

}  // namespace bw24::kcheck
