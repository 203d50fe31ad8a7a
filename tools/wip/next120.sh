#!/bin/bash
# next120 (carry .carry only): bash tools/wip/next120.sh SHA  (timeout 560)
# new = wip/stage-ahead2 SHA (from main 2c70fac), packed from its clean HEAD; base = main's bench. Pack first (next119's
# programs out): rm .carry/bins/new--*; git checkout wip/stage-ahead2 && tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check libbw24.so.0 tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (base--bw24-bench stays).
# One change: the int8 activation staging (streamed kernel, warp-per-row stage_act) through stage_q8_rows: up to six
# quads and pairs a thread loaded before any store (a warp-uniform bound and a __syncwarp keep ptxas from pulling a
# store up), where the load-then-store loop ran its remainder iterations one round trip each: the streamed K = 12,288
# launches (Qwen3-8B / Qwen3.5-9B downs) took 3 round trips, Q8_0's two loops 2 at K = 4096 and 5 at 12,288, the MoE
# combine (k = 8, K = 768) 2. Same values. Prediction: Qwen3-8B Q4_K_M +1.4 %, Q8_0 +3-4 % (if its consumers compile
# as well: Q8_0 lost 0.9 % to a register change in next112), Qwen3.5-9B Q8_0 alike, Qwen3-30B-A3B +1 %, BF16 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi moe gemv_q8
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3.5-9b:Q8_0; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
for m in qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do [ $(el) -lt 470 ] && { row base base $m tg128 "$A"; row new new $m tg128 "$A"; }; done
echo "end t=$(el)"
