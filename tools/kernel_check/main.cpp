// bw24-kernel-check: every CUDA kernel against the CPU reference (lib/ref) on fresh random inputs
// over swept shapes (tile-boundary sizes and real model widths), output buffers poisoned with NaN
// before each run. GEMV error = max |y - ref| / sum |w x| (the fp32 rounding scale); other kernels
// and the gate-up epilogue report the normalized error ||y - ref|| / ||ref||. Quantized kernels are
// compared with the reference matmul over the same quantized bytes and, on the int8 path, the same
// quantized activations (ref::quantize_act_q8). Prints a table; exit 0 all green, 1 any failure,
// 77 no CUDA device (skipped).
//
//   bw24-kernel-check [NAME]    NAME: run only the check families whose name contains it (gemm, ...)
#include "tools/kernel_check/check.h"

using namespace bw24;
using namespace bw24::kcheck;

int main(int argc, char** argv) {
  int n = cuda::device_count();
  if (n == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  char name[256];
  int maj = 0, min = 0;
  unsigned long long mem = 0;
  cuda::device_properties(0, name, sizeof name, &maj, &min, &mem);
  std::printf("device 0: %s (sm_%d%d, %.0f GiB)\n\n| kernel | shape | error | status |\n|---|---|---|---|\n", name, maj,
              min, mem / 1073741824.0);
  std::mt19937 rng(1234);
  ThreadPool pool(0);
  Result r;
  // bw24-kernel-check [NAME]: only the check families whose name contains NAME (e.g. gemm).
  const std::string only = argc > 1 ? argv[1] : "";
  auto run = [&](const char* name, auto&& fn) {
    if (only.empty() || std::string(name).find(only) != std::string::npos) fn();
  };
  run("rmsnorm", [&] { check_rmsnorm(rng, r); });
  run("rmsnorm_q8", [&] { check_rmsnorm_q8(rng, r); });
  run("qk_rope", [&] { check_qk_rope(rng, r); });
  run("attention", [&] { check_attention(rng, r); });
  run("attention_rope", [&] { check_flash_decode_rope(rng, r); });
  run("attention_bound", [&] { check_flash_decode_bound(rng, r); });
  run("gemv_float", [&] { check_gemv_float(rng, pool, r); });
  run("gemv_float_multi", [&] { check_gemv_float_multi(rng, pool, r); });
  run("gemv_q8", [&] { check_gemv_q8(rng, pool, r); });
  run("gemv_q8_multi", [&] { check_gemv_q8_multi(rng, r); });
  run("gemv_q8_streamed", [&] { check_gemv_q8_streamed(rng, r); });
  run("gemv_q8_chain", [&] { check_gemv_q8_chain(rng, r); });
  run("gemv_q8_room", [&] { check_gemv_q8_room(rng, r); });
  run("gemv_q8_gate_up_q8", [&] { check_gemv_q8_gate_up_q8(rng, r); });
  run("gemv_q8_norm_fold", [&] { check_gemv_q8_norm_fold(rng, r); });
  run("dequant", [&] { check_dequant(rng, r); });
  run("gemm", [&] { check_gemm(rng, pool, r); });
  run("gemm_multi", [&] { check_gemm_multi(rng, r); });
  run("gemm_grouped", [&] { check_gemm_grouped(rng, pool, r); });
  run("gemm_fused", [&] { check_gemm_fused(rng, r); });
  run("gemm_grouped_q8", [&] { check_gemm_grouped_q8(rng, r); });
  run("flash_prefill", [&] { check_flash_prefill(rng, r); });
  run("argmax", [&] { check_argmax(rng, r); });
  run("embed", [&] { check_embed(rng, r); });
  run("gate_ops", [&] { check_gate_ops(rng, r); });
  run("gated_act", [&] { check_gated_act(rng, r); });
  run("gdn", [&] { check_gdn(rng, r); });
  run("moe", [&] { check_moe(rng, r); });
  run("sample", [&] { check_sample(rng, r); });
  std::printf("\n%d passed, %d failed\n", r.run - r.failed, r.failed);
  return r.failed ? 1 : 0;
}
