#!/bin/bash
# next60 (carry .carry only):  bash tools/wip/next60.sh <sha>  (< 5 min; timeout_s 330)
# Where a Qwen3-30B-A3B MoE block's 27.3 us go inside the graph (round 13: ~24 MB of routed experts and the router,
# ~7 us at the copy rate, in five launches: norm, router, routed gate-up, the down input's quantization, routed down +
# combine). BW24_ABLATE's MoE parts (main after cab04bd): moegate, moeup, moedown (with its input's quantization).
# Packing (here, on main): rm -f .carry/bins/* && bash tools/wip/pack-bins.sh new HEAD bw24-bench (or B=base: the
# base build of another script's carry)
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
P="-p 16 -n 128 -r 3 -d 0"
for p in none moe moegate moeup moedown moegate,moeup,moedown norm; do
  row "ablate-$p" ${B:-new} qwen3-30b-a3b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done; echo "t=$(el)"
for p in none moegate moeup moedown; do [ $(el) -lt 250 ] &&
  row "ablate-$p" ${B:-new} qwen3.6-35b-a3b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done; echo "end t=$(el)"
