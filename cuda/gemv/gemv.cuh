// Decode GEMV: y[t][r] = sum_c W[r][c] * x[t][c] for up to 8 tokens, one warp per row, two
// families behind one header:
//  gemv.cu     float weights (F32, F16, BF16) against f32 activations: lanes split the row into
//              contiguous 16-byte loads (v2); unaligned rows: v1, a lane per element.
//  gemv_q8.cu  quantized weights (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K) against int8 activations
//              (quantized once per GEMV input by rmsnorm_q8, cuda/norm), dp4a dot products, weights
//              in their kernel-native layout (lib/quant/repack.h: planes for the formats whose
//              blocks are not 16-byte multiples, file layout for Q4_K).
// bw24-kernel-check compares every entry with the reference matmul (int8 path: over the same
// quantized activations).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/common/device.h"

namespace bw24::cuda {

constexpr int kGemvMaxTokens = 8;

// What the epilogue does with row r's result v (and, for kGateUp, u = row r of the second matrix):
enum class GemvOut : int {
  kStore,   // y = v
  kAdd,     // y += v (the residual add of an output projection)
  kGateUp,  // y = act(v) * u, act 0 = SiLU, 1 = tanh GELU (gate and up as one pass; int8 path)
};

// Mixture-of-experts routing of one launch (cuda/moe): w holds stacked experts, expert e at
// w + e * expert_bytes, each a rows x cols matrix in its kernel-native layout (DeviceWeights
// repacks expert by expert). The launch computes `pairs` row vectors (n_tokens must be 1): pair p
// multiplies expert ids[p] with input row p / x_div (x_div = experts per token: every expert of a
// token reads the token's row; 1: pair p has its own row) into output row p. The ids are read on
// the device, after the PDL wait, so a CUDA graph replays the routing of every step.
struct GemvRoute {
  const int32_t* ids;
  int64_t expert_bytes;
  int pairs, x_div;
};

// ---- float weights: x [n_tokens][cols] f32 ----
bool gemv_supports(uint32_t ggml_type);
cudaError_t gemv(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, const float* x, int n_tokens,
                 float* y, GemvOut out, cudaStream_t stream, const GemvRoute* route = nullptr);

// ---- quantized weights on the int8 path ----
// Token t's activations: q[t * cols + c] int8, and per block of 32 columns ds[t * cols / 32 + b] =
// (d, d * sum of the block's q) with x ~= d * q (ref::quantize_act_q8 mirrors the format).
struct ActQ8 {
  const int8_t* q;
  const float2* ds;
  bool per256 = false;  // d shared by each 256 columns (rmsnorm_q8's per256): gemm_grouped_q8's superblock kernel
  // A folded norm (gemv_q8_add_normed wrote q, ds as x w, not x w / rms): the launch multiplies each
  // output by 1 / sqrt(sum(norm_parts[0 .. n_parts)) / cols + norm_eps). Only the streamed kernel
  // takes such an input; every other path returns cudaErrorNotSupported for it.
  const float* norm_parts = nullptr;
  int n_parts = 0;
  float norm_eps = 0.0f;
};
bool gemv_q8_supports(uint32_t ggml_type);
// w (and w2 for kGateUp, same type and shape): rows x cols of ggml_type in kernel-native layout.
// room: one CTA of the next launch, which PDL makes resident while this one runs. A streamed launch
// given it asks for enough shared memory that no SM holds more of its CTAs than leave that room,
// where two an SM still fit: the same kernel, stages, grid and bits. Qwen3-30B-A3B's O projection
// before the cluster router (moe_gate_room): beside three of its CTAs no router CTA fit, so the
// router's row copies waited for the O projection's end (docs/performance.md, rounds 58-59).
cudaError_t gemv_q8(const void* w, const void* w2, uint32_t ggml_type, int64_t rows, int64_t cols, ActQ8 x,
                    int n_tokens, float* y, GemvOut out, int act, cudaStream_t stream,
                    const GemvRoute* route = nullptr, const CtaRoom* room = nullptr);

// The one-token gate-up (w, w2: rows x cols) writing y and, as well, y as the next GEMV's int8 input
// (q [rows], ds [rows / 32]: rmsnorm_q8's bits without a norm), so the int8 launch between it and the
// down projection goes. Only the streamed kernel does that (Q4_K / Q5_K, rows % 32 == 0, sm_90, the
// streamed switch and BW24_GATEUP_Q8 on, and only where dealing the row groups in runs of four keeps the
// plain grid's CTA count, e.g. the 12,288-row gate-ups of Qwen3-8B and Qwen3.5-9B): each CTA takes runs
// of four row groups (whole blocks of 32 rows) and its warp 0 quantizes a block once the eight consumer
// warps have its rows. *written says whether it did; otherwise the launch is gemv_q8's gate-up and the
// caller quantizes y. gemv_q8_set_gate_up_q8_always (kernel check): take it at every shape it handles.
cudaError_t gemv_q8_gate_up_q8(const void* w, const void* w2, uint32_t ggml_type, int64_t rows, int64_t cols, ActQ8 x,
                               float* y, int act, int8_t* q, float2* ds, cudaStream_t stream, bool* written);
// The one-token output projection (y += W x) writing, as well, the next norm's GEMV input without
// the norm's 1 / rms: q, ds = y w (w: the norm's weight, 1 + w where one_plus) in blocks of 32, as
// rmsnorm_q8 would quantize them (codes do not change when a block is scaled), and parts[i] = the
// sum of y^2 over rows 16 i .. 16 i + 15 (rows / 16 of them). The next launch takes them as an
// ActQ8 with norm_parts (the consumer applies 1 / rms to its outputs), so the rmsnorm_q8 launch
// between the two goes. Only the streamed kernel does it (Q4_K / Q5_K / Q6_K, one segment of whole
// pieces, sm_90, where dealing the row groups in runs of two keeps the plain grid: two groups a CTA,
// clusters of two CTAs meeting in distributed shared memory for a block's scale); *written says
// whether it did, else the launch is gemv_q8's add and q, ds, parts are not written.
// BW24_NORM_FOLD=0 (gemv_q8_set_norm_fold(false)) turns it off.
struct NormOut {
  const float* w;
  bool one_plus;
  int8_t* q;
  float2* ds;
  float* parts;
};
cudaError_t gemv_q8_add_normed(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, ActQ8 x, float* y,
                               const NormOut& norm, cudaStream_t stream, const CtaRoom* room, bool* written);
bool gemv_q8_norm_fold_on();
void gemv_q8_set_norm_fold(bool on);
// Whether a one-token launch of `type` with epilogue `out` over a folded input (ActQ8::norm_parts),
// rows x cols (a gate-up: each of its two matrices), is taken: the streamed kernel's folded instances
// exist for Q4_K, Q5_K (store, gate-up) and Q6_K (store), over whole groups of 8 rows and whole pieces.
bool gemv_q8_takes_folded(uint32_t ggml_type, GemvOut out, int64_t rows, int64_t cols);
bool gemv_q8_gate_up_q8_on();
void gemv_q8_set_gate_up_q8(bool on);
bool gemv_q8_gate_up_q8_always();
void gemv_q8_set_gate_up_q8_always(bool on);

// One-token Q4_K / Q5_K launches, one-matrix Q6_K launches and (through gemv) one-token F16 / BF16
// store / add launches on sm_90 take the streamed kernel (persistent CTAs with a bulk-copy ring,
// gemv_stream.cu; results equal the warp-per-row kernels' up to float summation order). On by
// default; BW24_GEMV_STREAM=0 in the environment or gemv_q8_set_streamed(false) (kernel check,
// A/B benchmarks) keeps the warp-per-row kernels.
bool gemv_q8_streamed();
void gemv_q8_set_streamed(bool on);
// Whether a one-token launch of `type` with epilogue `out` takes the streamed kernel (the switch is
// on and the device has PDL). Its weight copies start before its PDL wait; the warp-per-row
// kernels only prefetch into L2 there, so a caller folding away the launch before one (flash
// decode's OutEpilogue) asks first.
bool gemv_q8_streams(uint32_t type, GemvOut out);
// The latest streamed launch whose shared memory a room raised (kernel check): one of its CTAs as
// padded, how many fit an SM beside the room's CTA, and how many launches were raised so far.
struct GemvRoomRecord {
  CtaRoom cta;
  int64_t ctas_per_sm = 0, raised = 0;
};
GemvRoomRecord gemv_stream_last_room();

// A MoE layer's routed down projection and its combine in one launch (decode): route.pairs =
// n_tokens x c.k pairs, pair t k + j token t's j-th expert, each with its own input row (x_div 1).
// A CTA takes four rows of every pair of one token (a warp a pair, as the routed store launch's
// four rows a warp) and adds them into the residual: c.x[t][r] = moe_combine_value(c.x[t][r],
// c.weights[t k ..], pair values, k, c.shared_out[t][r] or none, c.shared_gate[t]) -- the bits
// moe_combine gives over the routed store launch's output, one launch and one kernel boundary
// fewer. gemv_q8_combine_supports: int8-path type, rows a multiple of four, k <= 8 (a warp a pair).
struct MoeCombine {
  float* x;                  // [n_tokens][rows] residual, updated in place
  const float* weights;      // [n_tokens][k] routing weights
  const float* shared_out;   // [n_tokens][rows] the shared expert's output, or null
  const float* shared_gate;  // [n_tokens] its gate logits (with shared_out)
  int k;
  // Where set: the pairs' f32 rows [pairs][cols], which the launch quantizes itself as rmsnorm_q8 would
  // (the same bits; gemv_q8_combine's x is then not read): the int8 launch before it goes.
  const float* act = nullptr;
};
// Q6_K rows of up to 4 blocks and Q4_K rows of up to 2 copy their weights into shared memory by
// cp.async right after the expert id (BW24_COMBINE_ASYNC=0: the register loads everywhere); same bits.
// gemv_q8_combine_async_launches: how many launches took that form (kernel check, which also turns the
// form off with gemv_q8_set_combine_async(false) to check the register loads at the same shapes).
long gemv_q8_combine_async_launches();
bool gemv_q8_combine_async();
void gemv_q8_set_combine_async(bool on);
// Where the cp.async form runs, the launch quantizes its input (MoeCombine::act) with two row groups a CTA,
// and rows are at most 4 blocks (every MoE shape here: Q6_K, and Q4_K up to 1,024 wide), lane 0 of each
// warp copies the warp's rows with one cp.async.bulk a run instead (BW24_COMBINE_BULK=0: the lanes'
// cp.async); same image, same bits. gemv_q8_combine_bulk_launches counts them (kernel check, which turns
// the form off with gemv_q8_set_combine_bulk(false) to check the cp.async form at the same shapes).
long gemv_q8_combine_bulk_launches();
bool gemv_q8_combine_bulk();
void gemv_q8_set_combine_bulk(bool on);
// The one-token Q4_K routed gate-up over rows of up to 2,048 columns whose grid needs more than one wave of the
// register kernel (four CTAs an SM) copies each warp's gate and up rows by cp.async.bulk into shared memory and
// dots from there, six CTAs an SM (BW24_GATEUP_BULK=0: the register kernel everywhere); same bits.
// gemv_q8_gate_up_bulk_launches counts them; gemv_q8_set_gate_up_bulk_always(true) (kernel check) takes it at
// every shape it handles, so small grids check it too.
long gemv_q8_gate_up_bulk_launches();
bool gemv_q8_gate_up_bulk();
void gemv_q8_set_gate_up_bulk(bool on);
void gemv_q8_set_gate_up_bulk_always(bool on);
// Q4_K and Q6_K combines over row counts that are multiples of 8 take two row groups of four a CTA
// (16 warps) that stage the token's activation rows once for both (BW24_COMBINE_WIDE=0: one group,
// 8 warps, everywhere); same bits. The kernel check turns it off with gemv_q8_set_combine_wide(false)
// to check the one-group form at the same shapes; gemv_q8_combine_wide_launches counts the launches.
long gemv_q8_combine_wide_launches();
bool gemv_q8_combine_wide();
void gemv_q8_set_combine_wide(bool on);
bool gemv_q8_combine_supports(uint32_t ggml_type, int64_t rows, int64_t cols, int k);
// Whether the launch quantizes its own input here (MoeCombine::act): Q4_K / Q6_K in two row groups a
// CTA, k x cols in whole 128-float chunks of at most 4 a warp. gemv_q8_combine_quant: the runner's
// switch (on; BW24_COMBINE_QUANT=0 keeps the int8 launch, for A/B).
bool gemv_q8_combine_quantizes(uint32_t ggml_type, int64_t rows, int64_t cols, int k);
bool gemv_q8_combine_quant();
// Registers and resident CTAs an SM of the MoE decode launches of `type` on the current device: the
// one-token routed gate-up over rows of gate_cols, and the down + combine over rows of down_cols for
// k experts a token (the form gemv_q8_combine takes there). The kernel check holds the Q4_K gate-up
// to four CTAs an SM and the combines to 1,024 threads an SM (four of 8 warps, or two of 16), the
// counts their grids were measured with (a gate-up that grew to 70 registers ran at three, docs/
// performance.md round 37).
struct GemvOccupancy {
  int regs = 0, ctas_per_sm = 0, threads = 0;  // threads: a CTA's
};
cudaError_t gemv_q8_routed_occupancy(uint32_t ggml_type, int64_t gate_cols, int64_t down_cols, int k,
                                     GemvOccupancy* gate_up, GemvOccupancy* combine);
cudaError_t gemv_q8_combine(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, ActQ8 x,
                            const GemvRoute& route, const MoeCombine& c, cudaStream_t stream);

// Several matrices of one type and width over the same input in one launch (Q, K, V: one launch
// instead of three; the small K and V alone fill less than one wave of CTAs). Four: a Qwen3.5
// delta-net layer's in_qkv, in_z, in_b and in_a (with three, in_a took a launch of its own, 4 CTAs,
// ~2 us of the step's critical path a layer: bw24-kernel-trace, round 26).
constexpr int kMaxGemvSegments = 4;
struct GemvSegment {
  const void* w;
  float* y;
  int64_t rows;
};
// How a streamed launch takes its place in the PDL chain. kPlain: trigger, then wait for the
// previous kernel (every launch but these). kWaitFirst: wait, then trigger, so the next kernel
// starts only once this one's input is complete. kIndependent, for a launch after a kWaitFirst (or
// kIndependent) one over the same input: no wait before it reads that input, a wait before it
// exits, so its completion still implies its predecessor's (the next kernel's wait covers both).
// Q + K and V of a Q4_K_M layer (two launches: attn_v is Q6_K) then overlap instead of queueing.
enum class GemvChain : int { kPlain, kWaitFirst, kIndependent };
// chained (optional): set to whether the launch took `chain` (only the streamed kernel does; the
// others launch kPlain, which is always safe after a kWaitFirst or kIndependent launch).
cudaError_t gemv_q8_multi(const GemvSegment* segs, int n_segs, const void* w2, uint32_t ggml_type, int64_t cols,
                          ActQ8 x, int n_tokens, GemvOut out, int act, cudaStream_t stream,
                          GemvChain chain = GemvChain::kPlain, bool* chained = nullptr);
// The same for F32 / F16 / BF16 weights over an f32 input (gemv's types; store or add): one streamed
// launch for one F16 / BF16 token on sm_90, else one launch a segment. Outputs equal gemv's bit for bit.
cudaError_t gemv_multi(const GemvSegment* segs, int n_segs, uint32_t ggml_type, int64_t cols, const float* x,
                       int n_tokens, GemvOut out, cudaStream_t stream);

}  // namespace bw24::cuda
