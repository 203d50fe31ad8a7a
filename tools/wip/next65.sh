#!/bin/bash
# next65 (carry .carry only; ~33 MB):  bash tools/wip/next65.sh 3ea437a  (< 8 min; timeout_s 520)
# new = wip/route-in-up-cta 3ea437a, variant C: main 9869ae9 + the routed gate-up routing its pairs in its launch
# (moe_gate writes only the logits; each gate-up CTA routes its token, a one-token pass with the whole CTA, an expert a
# thread, cta_route, several tokens with warp 0, warp_route; CTAs of row block 0 write ids and weights for the down
# launch), the route kernel held to four CTAs an SM (Q4_K 64 registers, 16 bytes of spill), and moe_gate's own
# one-token tail on cta_route too (the option off, ablations). newb = ebbd9aa, variant B: the same with warp_route
# only (64 registers, 56 bytes of spill); bench only. (Variant A, 0830260, unbounded: 72 registers, three CTAs an SM,
# 1.94 waves for the 30B's 768 CTAs; not packed.) base = main 4c243d7 (9869ae9's code).
# Patches: tools/wip/patches/route-in-launch.patch = the four commits A, B, cta-route, C (git am onto 9869ae9 or main).
# Why: round 14's ablation put the 30B's router at 5.7 us a MoE layer for 1 MB (the routed GEMVs cannot start
# before it ends): a CTA a logit, then a fence, a count, the last CTA's reload and its warp's softmax / top-8.
# 1. Kernel check moe (routing in the launch bit-equal to moe_route + the routed launch for 3 tokens and to moe_gate's
#    routing over an identity router for 1; moe_gate's logits-only form; moe_gate with a tie for the first pick) and
#    gemv_q8 (every plain instance: the kernel became a body with two shells), GPU tests (the fused-launches test
#    with moe_route_in_launch off: logits bit-identical on tiny-qwen3moe / tiny-qwen35moe).
# 2. Prediction: the router's tail (~2-3 us) leaves the chain, each gate-up CTA pays ~0.4 us of routing (C) or ~1 us
#    (B) instead of its id load: Qwen3-30B-A3B 416 -> ~435 (C), ~428 (B); Qwen3.6-35B-A3B 398 -> ~410.
# 3. ncu of new's route kernel and logits-only router.
# Packing (here): on 3ea437a pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests libbw24.so.0; on ebbd9aa pack-bins.sh newb HEAD; on main pack-bins.sh base HEAD
#   (all three packed in .carry at the end of round 14).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe gemv_q8; cat "$OUT/kc-moe-$SHA.txt" >> "$OUT/kc-gemv_q8-$SHA.txt"; rm "$OUT/kc-moe-$SHA.txt"
echo "route-in-launch / logits-only rows not ok: $(grep -E 'routing in the launch|logits only' "$OUT/kc-gemv_q8-$SHA.txt" | grep -vc ' ok ')"
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new newb; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new newb; do [ $(el) -lt 380 ] && row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ $(el) -lt 430 ] && timeout 80 $ncu --clock-control none -k regex:"gate_kernel|gemv_q8_route" --launch-skip 300 \
  --launch-count 2 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 64 -r 1 -d 0 --device 0 > "$OUT/ncu-$SHA.txt" 2>&1
grep -E "gate_kernel|route_kernel|Duration|Registers Per|Achieved Occ|Waves" "$OUT/ncu-$SHA.txt" | head -16
echo "end t=$(el)"
