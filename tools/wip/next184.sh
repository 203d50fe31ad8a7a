#!/bin/bash
# next184 (carry .carry only; prepared in round 31, not run): bash tools/wip/next184.sh SHA  (timeout 420) -- the delta
# net's decode kernel as a constant-shape instance (tools/wip/patches/gdn-typed.patch, branch wip/gdn-typed): for
# K = 4, dk = dv = 128 and one token (Qwen3.5, Qwen3.6, Qwen3-Next decode steps) decode_kernel<4, 128, 128, 1>,
# 1,656 -> 1,240 SASS instructions and 103 -> 83 registers, no token loop; every other shape keeps
# decode_kernel<0, 0, 0, 0>, SASS-identical to main's kernel (cuobjdump). Round 31's flash decode change (a kernel run
# once a layer, compacted: +1.6-3.9 %) is the reason to try it. One binary: BW24_AB_GDN_GENERIC=1 = main's kernel.
# Pack (from the branch): tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check. Prediction: Qwen3.5-9B
# +0.5-1.5 % (24 delta-net layers, decode_kernel's 8.1 us segment).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gdn
for i in 1 2; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row generic new $m tg128 "-p 16 -n 128 -r 3" BW24_AB_GDN_GENERIC=1
  row typed new $m tg128 "-p 16 -n 128 -r 3"
done; done
echo "end t=$(el)"
