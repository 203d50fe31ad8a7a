#!/bin/bash
# next175 (carry .carry only): bash tools/wip/next175.sh SHA  (timeout 380) -- the int8 streamed formats one kernel
# instance per cut too (branch wip/cut-all: main + every format through launch_cut<..., cut>; BW24_AB_RUNTIME_CUT=1
# gives main's three-copy kernel for the int8 formats in the same binary). pack-bins.sh new wip/cut-all bw24-bench
# bw24-kernel-check. Expect: gemv_q8_streamed all ok (same sums, same order). Prediction: 0 to +0.5 % (the int8
# kernels had no stack; a kernel of one copy may schedule its loop differently, and it is simpler code if not worse).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 330 ] && row base new $m tg128 "-p 16 -n 128 -r 3" BW24_AB_RUNTIME_CUT=1
  [ $(el) -lt 330 ] && row new new $m tg128 "-p 16 -n 128 -r 3"; done; done
echo "end t=$(el)"
