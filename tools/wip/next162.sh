#!/bin/bash
# next162 (carry .carry only): bash tools/wip/next162.sh SHA  (timeout 500) -- prepared in round 28, not yet run: multi-token
# add GEMVs (the O and down projections of a 2-8 token pass: speculative decoding's verification) read every token's old
# output before the first store (tools/wip/patches/add-residual-ahead.patch on main: gemv_q8_kernel's add epilogue, gemv.cu
# store_row; bw24-microbench gemv_q8 takes a token count). In the store loop each read waited for the stores before it (the
# compiler cannot tell them apart): nt - 1 dependent L2 round trips at the end of every warp (SASS of main: 1-7 LDG after
# STG in each add instance; none with the patch). Registers: add instances +-2, Q4_K nt = 3 93 -> 80 with 16 more stack bytes.
# Pack: base = main's bw24-microbench (pack-bins.sh base HEAD bw24-microbench on main); new = the patched tree's
# bw24-microbench, bw24-kernel-check, tests/bw24_model_tests, tests/bw24_gpu_vs_cpu_tests (pack-bins.sh new HEAD ...).
# Expect: kernel check gemv_q8 / gemv_float all ok (multi-token add rows bit-equal to main's: same sums); GPU tests passed.
# Prediction: gemv_q8/Q4_K 4096 x 4096 add at 8 tokens -2-3 us (7 round trips), at 2 tokens -0.3-0.5 us; nt = 1 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8 gemv_float
gpu_tests $SHA
for b in base new base new; do timeout 90 ./build-$b/bw24-microbench --benchmark_filter='gemv_q8/Q4_K' 2>&1 |
  grep -E "gemv_q8" | sed "s/^/$b /"; done
echo "end t=$(el)"
