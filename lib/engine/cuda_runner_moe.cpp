// The CUDA runner's mixture-of-experts layers (the class: cuda_runner_impl.h).
#include "lib/engine/cuda_runner_impl.h"

namespace bw24::engine::cuda_runner_detail {

absl::Status CudaRunner::check_moe(const arch::MoeBlock& e) const {
  if (e.n_used < 1 || e.n_used > cuda::kMoeMaxUsed || e.n_used > e.n_expert)
    return error(Code::kUnsupported, "{}: {} of {} experts per token (the CUDA router takes 1 to {})", g_.arch,
                 e.n_used, e.n_expert, cuda::kMoeMaxUsed);
  if (is_q8(e.gate_exps) != is_q8(e.up_exps))
    return error(Code::kUnsupported, "{}: expert gate and up tensors of types {} and {} (the CUDA runner wants "
                 "both quantized or both float)", g_.arch, type_name(w_.type_of(e.gate_exps.t)),
                 type_name(w_.type_of(e.up_exps.t)));
  for (const arch::Weight* w : {&e.gate_exps, &e.up_exps, &e.down_exps})
    if (w->t->n_dims != 3 || w->t->ne[2] != e.n_expert)
      return error(Code::kModel, "'{}' is not a stack of {} experts", w->t->name, e.n_expert);
  return absl::OkStatus();
}

bool CudaRunner::router_fused(const arch::MoeBlock& e, int n) const {
  return cuda::moe_gate_supports(w_.at(e.router.t), w_.type_of(e.router.t), n, e.n_expert, e.router.cols());
}

bool CudaRunner::router_takes_norm(const arch::MoeBlock& e, int n) const {
  return opt_.fused_moe_norm && n == 1 && uses_q8_ && g_.n_embd % 32 == 0 && !ablate(kAblNorm, n) &&
         !ablate(kAblMoeGate, n) && router_fused(e, n);
}

cuda::CtaRoom CudaRunner::router_room(const MlpBlock& m, int n) const {
  cuda::CtaRoom room{};
  if (!m.is_moe() || n != 1 || ablate(kAblMoe, n) || ablate(kAblMoeGate, n) || !router_fused(m.moe, n)) return room;
  const arch::MoeBlock& e = m.moe;
  // A failed attribute query leaves the room empty: the launch before keeps its usual CTAs.
  if (cuda::moe_gate_room(w_.type_of(e.router.t), n, e.n_expert, e.router.cols(), e.n_used, router_takes_norm(e, n),
                          &room) != cudaSuccess) {
    cudaGetLastError();
    room = {};
  }
  return room;
}

// x += sum over the token's top-k experts of p_e down_e(act(gate_e h) * up_e h) (+ the shared
// expert scaled by its sigmoid gate), as the CPU reference's moe(). Pair p = t * k + j is token
// t's j-th expert; all of a step's pairs go through each routed GEMV in one launch.
absl::Status CudaRunner::moe(const MlpBlock& m, int n) {
  const arch::MoeBlock& e = m.moe;
  const int E = g_.n_embd, k = e.n_used;
  const void* router = w_.at(e.router.t);
  const uint32_t router_type = w_.type_of(e.router.t);
  // One token: the router launch also does the block's input norm (cuda::MoeGateNorm, rmsnorm_q8's
  // bits), so the norm's launch and its boundary go where the cluster router runs.
  if (router_takes_norm(e, n)) {
    const GemvIn in{h_.p, {act_q_.p, act_ds_.p}, nullptr};
    const cuda::MoeGateNorm nm{f32(m.norm.w), g_.norm_eps, m.norm.one_plus, h_.p, act_q_.p, act_ds_.p};
    BW24_CUDA_OK(cuda::moe_gate(moe_.ids.p, moe_.weights.p, moe_.logits.p, moe_.gate_counter.p, router, router_type,
                                x_.p, n, e.n_expert, e.router.cols(), k, e.norm_topk, stream_, &nm),
                 "MoE norm + router");
    return moe_experts(m, in, n);
  }
  BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&m.norm, x_.p, n, E));
  if (in.bf) return moe_prefill(m, in.bf, n);
  // The router product and the routing in one launch where the router is F32 / F16 / BF16.
  if (ablate(kAblMoeGate, n)) {
    // left out: the routed launches read the last routes written (valid experts; zero at first)
  } else if (router_fused(e, n)) {
    BW24_CUDA_OK(cuda::moe_gate(moe_.ids.p, moe_.weights.p, moe_.logits.p, moe_.gate_counter.p, router, router_type,
                                in.x, n, e.n_expert, e.router.cols(), k, e.norm_topk, stream_),
                 "MoE router");
  } else {
    BW24_RETURN_IF_ERROR(matmul(e.router, in, n, moe_.logits.p, cuda::GemvOut::kStore));
    BW24_CUDA_OK(cuda::moe_route(moe_.ids.p, moe_.weights.p, moe_.logits.p, n, e.n_expert, k, e.norm_topk, stream_),
                 "MoE router");
  }
  return moe_experts(m, in, n);
}

// The GEMV pass's experts after the routing: the shared expert where the model has one, the routed
// gate-up and down, the combine. in: the normed rows.
absl::Status CudaRunner::moe_experts(const MlpBlock& m, const GemvIn& in, int n) {
  const arch::MoeBlock& e = m.moe;
  const int E = g_.n_embd, k = e.n_used, pairs = n * e.n_used;
  const int64_t F = e.gate_exps.rows();
  const int act = m.act == arch::Activation::kSilu ? 0 : 1;
  // Everything that reads the normed rows (in) before the activations buffer is requantized.
  if (e.shared_gate_inp) {
    BW24_RETURN_IF_ERROR(matmul(e.shared_gate_inp, in, n, moe_.shared_gate.p, cuda::GemvOut::kStore));
    BW24_RETURN_IF_ERROR(gate_up(e.shared_gate, e.shared_up, in, n, gate_.p, up_.p, act));
  }
  const Routing by_token{pairs, k}, by_pair{pairs, 1};
  if (!ablate(kAblMoeUp, n))
    BW24_RETURN_IF_ERROR(gate_up(e.gate_exps, e.up_exps, in, n, moe_.gate.p, moe_.up.p, act, &by_token));
  if (e.shared_gate_inp) {
    const int64_t Fs = e.shared_gate.rows();
    BW24_ASSIGN_OR_RETURN(const GemvIn sin, gemv_input(nullptr, gate_.p, n, static_cast<int>(Fs)));
    BW24_RETURN_IF_ERROR(matmul(e.shared_down, sin, n, proj_.p, cuda::GemvOut::kStore));
  }
  if (ablate(kAblMoeDown, n)) return absl::OkStatus();
  const float* shared_out = e.shared_gate_inp ? proj_.p : nullptr;
  const uint32_t down_type = w_.type_of(e.down_exps.t);
  if (opt_.fused_combine && cuda::gemv_q8_combine_supports(down_type, e.down_exps.rows(), F, k)) {
    // The down projection adds its pairs into x itself: moe_combine's launch and boundary go. Where it
    // quantizes the gate-up's rows itself (gemv_q8_combine_quantizes), the int8 launch goes too.
    const bool quantizes =
        cuda::gemv_q8_combine_quant() && cuda::gemv_q8_combine_quantizes(down_type, e.down_exps.rows(), F, k);
    GemvIn din{};
    if (!quantizes) {
      BW24_ASSIGN_OR_RETURN(din, gemv_input(nullptr, moe_.gate.p, pairs, static_cast<int>(F)));
    }
    const cuda::GemvRoute route{moe_.ids.p, expert_bytes(e.down_exps), pairs, 1};
    const cuda::MoeCombine c{x_.p, moe_.weights.p, shared_out, moe_.shared_gate.p, k, quantizes ? moe_.gate.p : nullptr};
    return cuda_status(cuda::gemv_q8_combine(w_.at(e.down_exps.t), down_type, e.down_exps.rows(), F, din.q8, route,
                                             c, stream_),
                       "MoE down projection + combine");
  }
  BW24_ASSIGN_OR_RETURN(const GemvIn din, gemv_input(nullptr, moe_.gate.p, pairs, static_cast<int>(F)));
  BW24_RETURN_IF_ERROR(matmul(e.down_exps, din, n, moe_.out.p, cuda::GemvOut::kStore, nullptr, 0, &by_pair));
  return cuda_status(cuda::moe_combine(x_.p, moe_.out.p, moe_.weights.p, shared_out, moe_.shared_gate.p, n, k, E,
                                       stream_),
                     "MoE combine");
}

// The MoE layer of a prefill pass on the tensor cores: router GEMM, moe_route, moe_group (pairs
// sorted by expert), the routed gate-up and down as grouped GEMMs (cuda/gemm gemm_grouped)
// over expert groups that fit the expansion scratch, the shared expert as dense GEMMs, then
// moe_combine as in decode. a: the normed rows in bf16 (act_bf_), overwritten by the activations
// once every product that reads it has been queued.
absl::Status CudaRunner::moe_prefill(const MlpBlock& m, const cuda::bf16* a, int n) {
  const arch::MoeBlock& e = m.moe;
  const int k = e.n_used, pairs = n * k;
  const int act = m.act == arch::Activation::kSilu ? 0 : 1;
  BW24_RETURN_IF_ERROR(gemm({{&e.router, moe_.logits.p}}, a, n, cuda::GemvOut::kStore));
  BW24_CUDA_OK(cuda::moe_route(moe_.ids.p, moe_.weights.p, moe_.logits.p, n, e.n_expert, k, e.norm_topk, stream_),
               "MoE router");
  BW24_CUDA_OK(cuda::moe_group(moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, moe_.ids.p, pairs,
                               e.n_expert, cuda::kGemmGroupRows, stream_),
               "MoE grouping");
  if (e.shared_gate_inp) {
    BW24_RETURN_IF_ERROR(gemm({{&e.shared_gate_inp, moe_.shared_gate.p}}, a, n, cuda::GemvOut::kStore));
    BW24_RETURN_IF_ERROR(gemm({{&e.shared_gate, gate_.p}, {&e.shared_up, up_.p}}, a, n, cuda::GemvOut::kStore));
  }
  // Q4_K / Q6_K stacks go through the int8 grouped GEMM (no bf16 expansion): its input is the
  // normed rows again, as int8 blocks (rmsnorm_q8), beside the bf16 ones the other products read.
  const bool q8_gate_up = q8_grouped({&e.gate_exps, &e.up_exps}), q8_down = q8_grouped({&e.down_exps});
  if (q8_gate_up) {
    BW24_CUDA_OK(cuda::rmsnorm_q8(nullptr, act_q_.p, act_ds_.p, x_.p, f32(m.norm.w), n, g_.n_embd, g_.norm_eps,
                                  m.norm.one_plus, stream_, opt_.moe_int8_superblock),
                 "MoE input (rmsnorm / int8)");
    BW24_RETURN_IF_ERROR(grouped_q8({{&e.gate_exps, moe_.gate.p}, {&e.up_exps, moe_.up.p}}, k, false, pairs, e.n_expert));
  } else {
    BW24_RETURN_IF_ERROR(grouped({{&e.gate_exps, moe_.gate.p}, {&e.up_exps, moe_.up.p}}, a, k, false, pairs, e.n_expert));
  }
  if (e.shared_gate_inp) {
    const int64_t Fs = e.shared_gate.rows();
    BW24_CUDA_OK(cuda::gated_act_bf16(act_bf_.p, gate_.p, up_.p, n * Fs, act, stream_), "activation");
    BW24_RETURN_IF_ERROR(gemm({{&e.shared_down, proj_.p}}, act_bf_.p, n, cuda::GemvOut::kStore));
  }
  const int64_t F = e.gate_exps.rows();
  if (q8_down) {  // the activations in f32 (in place), then as int8 blocks
    BW24_CUDA_OK(cuda::gated_act(moe_.gate.p, moe_.gate.p, moe_.up.p, pairs * F, act, stream_), "activation");
    BW24_CUDA_OK(cuda::rmsnorm_q8(nullptr, act_q_.p, act_ds_.p, moe_.gate.p, nullptr, pairs, static_cast<int>(F), 0.0f,
                                  false, stream_, opt_.moe_int8_superblock),
                 "activation (int8)");
    BW24_RETURN_IF_ERROR(grouped_q8({{&e.down_exps, moe_.out.p}}, 0, true, pairs, e.n_expert));
  } else {
    BW24_CUDA_OK(cuda::gated_act_bf16(act_bf_.p, moe_.gate.p, moe_.up.p, pairs * F, act, stream_), "activation");
    BW24_RETURN_IF_ERROR(grouped({{&e.down_exps, moe_.out.p}}, act_bf_.p, 0, true, pairs, e.n_expert));
  }
  return cuda_status(cuda::moe_combine(x_.p, moe_.out.p, moe_.weights.p, e.shared_gate_inp ? proj_.p : nullptr,
                                       moe_.shared_gate.p, n, k, g_.n_embd, stream_),
                     "MoE combine");
}

// Whether the routed products `ws` (one launch) take the int8 grouped GEMM: every stack of one
// type it reads as stored (Q4_K, Q6_K), experts 16-byte aligned, K a multiple of the superblock.
bool CudaRunner::q8_grouped(std::initializer_list<const arch::Weight*> ws) const {
  if (!opt_.moe_int8_prefill) return false;
  const uint32_t t = w_.type_of((*ws.begin())->t);
  for (const arch::Weight* w : ws)
    if (w_.type_of(w->t) != t || expert_bytes(*w) % 16 != 0 || w->cols() % 256 != 0) return false;
  return cuda::gemm_grouped_q8_supports(t);
}

// y_i [pairs][rows_i] = the grouped GEMM of stacked experts W_i (q8_grouped) over the pass's
// sorted pairs with the int8 rows in act_q_ / act_ds_ (a_div and c_scatter as cuda::GemmGroups):
// every expert in one launch, the stacks read as stored.
absl::Status CudaRunner::grouped_q8(std::initializer_list<GemmJob> jobs, int a_div, bool c_scatter, int pairs,
                                    int n_expert) {
  cuda::GemmSegment segs[cuda::kMaxGemmSegments];
  int count = 0;
  for (const GemmJob& j : jobs) segs[count++] = {w_.at(j.w->t), j.y, j.w->rows(), j.w->rows(), expert_bytes(*j.w)};
  const cuda::GemmGroups g{moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, 0, n_expert, a_div, c_scatter};
  return cuda_status(cuda::gemm_grouped_q8({act_q_.p, act_ds_.p, opt_.moe_int8_superblock}, segs, count,
                                           w_.type_of(jobs.begin()->w->t), g,
                                           pairs, jobs.begin()->w->cols(), cuda::GemvOut::kStore, stream_),
                     "int8 grouped gemm");
}

// y_i [pairs][rows_i] = the grouped GEMM of stacked experts W_i over the pass's sorted pairs
// (moe_.sorted ...; a_div and c_scatter as cuda::GemmGroups): experts in groups whose expansion
// fits wscratch_ (BF16 stacks are read in place), one dequant_bf16_slices per quantized stack
// and one GEMM launch per group.
absl::Status CudaRunner::grouped(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int a_div, bool c_scatter,
                                 int pairs, int n_expert) {
  const char* name = jobs.begin()->w->t->name.c_str();
  auto fail = [&](cudaError_t e) {
    return error(Code::kDevice, "CUDA grouped gemm of '{}': {}", name, cudaGetErrorString(e));
  };
  // Q4_K / Q6_K stacks are expanded inside the tile loads (their slices 16-byte aligned: any real
  // shape), BF16 ones read in place; the rest expand into wscratch_ a group of experts at a time.
  bool aligned = true;
  for (const GemmJob& j : jobs) aligned = aligned && expert_bytes(*j.w) % 16 == 0;
  const uint32_t fused = aligned ? fused_type(jobs) : 0;
  auto expands = [&](const arch::Weight& w) { return !fused && !is_bf16(w); };
  int64_t per_expert = 0;
  for (const GemmJob& j : jobs) per_expert += expands(*j.w) ? expanded_elems(*j.w) : 0;
  const int group = per_expert == 0 ? n_expert : static_cast<int>(std::min<int64_t>(n_expert, scratch_elems_ / per_expert));
  if (group < 1) return error(Code::kInternal, "expansion scratch smaller than one expert of '{}'", name);
  const int buf = free_scratch();
  for (int e0 = 0; e0 < n_expert; e0 += group) {
    const int e1 = std::min(n_expert, e0 + group);
    cuda::GemmSegment segs[cuda::kMaxGemmSegments];
    int count = 0;
    int64_t used = 0;
    for (const GemmJob& j : jobs) {
      const int64_t rows = j.w->rows(), cols = j.w->cols(), slice = expert_bytes(*j.w);
      const uint8_t* base = static_cast<const uint8_t*>(w_.at(j.w->t)) + e0 * slice;
      if (!expands(*j.w)) {  // the stack as it lies: expert e at base + (e - e0) slice
        segs[count++] = {base, j.y, rows, rows, slice};
        continue;
      }
      const cudaError_t e = cuda::dequant_bf16_slices(base, w_.type_of(j.w->t), rows, cols, slice, e1 - e0,
                                                      scratch(buf) + used, stream_);
      if (e != cudaSuccess) return fail(e);
      segs[count++] = {scratch(buf) + used, j.y, rows, rows, rows * cols * 2};
      used += (e1 - e0) * rows * cols;
    }
    const cuda::GemmGroups g{moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, e0, e1, a_div, c_scatter};
    const cudaError_t e = cuda::gemm_grouped(a, segs, count, fused ? fused : static_cast<uint32_t>(GgmlType::BF16), g,
                                             pairs, jobs.begin()->w->cols(), cuda::GemvOut::kStore, stream_);
    if (e != cudaSuccess) return fail(e);
  }
  return used_scratch(buf);
}

}  // namespace bw24::engine::cuda_runner_detail
