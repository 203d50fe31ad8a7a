#!/bin/bash
# next59 (carry .carry only; ~28 MB):  bash tools/wip/next59.sh <sha>  (< 8 min; timeout_s 480)
# base = main 9fee30f (round 13: gdn_decode, OutQ8 before the streamed GEMV only: that rule not yet run on a GPU);
# new = wip/merge-graphs (main + two captured decode graphs: below position 1,024 without flash decode's merge launch,
# flash_decode's max_pos; tools/wip/patches/merge-graphs.patch if this clone lacks the branch: git checkout -b
# wip/merge-graphs 9fee30f && git am tools/wip/patches/merge-graphs.patch).
# 1. new's kernel check attention (attention + attention_rope + attention_bound: max_pos below 1,024 the same bits as
#    the merge launch) and gemv_q8_streamed (round 13's even grid: rows measured, family not run), its GPU tests (a
#    new case: captured vs uncaptured steps across position 1,024, bit-identical).
# 2. main's OutQ8 rule: Qwen3-8B Q8_0 back to ~314 (312-315 unfused, 309-311 with OutQ8 on every pass; round 13),
#    Q4_K_M ~421-425.
# 3. Prediction for new: the JSON form's depth-0 tg128 (n_ctx 4,616: the merge launch every layer on base) up to the
#    short-context rows: Qwen3-8B Q4_K_M ~403 -> ~420, Qwen3-30B-A3B ~373 -> ~382; depth 4096 unchanged.
# Packing (here): on wip/merge-graphs pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests libbw24.so.0; on main pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA attention gemv_q8_streamed  # the latter: round 13's int8-only even grid, measured but not kernel-checked
grep -E "max_pos|FAIL" "$OUT/kc-attention-$SHA.txt" | head -8
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for b in base new base new; do row $b $b qwen3-8b:Q8_0 tg128 "$P"; done; echo "t=$(el)"
J="-p 512 -n 128 -r 2 -d 0,4096"
for i in 1 2; do for b in base new; do row "$b(json form)" $b qwen3-8b:Q4_K_M tg128 "$J"; done; done; echo "t=$(el)"
for b in base new; do [ $(el) -lt 330 ] && row "$b(json form)" $b qwen3-30b-a3b:Q4_K_M tg128 "$J"; done; echo "t=$(el)"
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do [ $(el) -lt 400 ] &&
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/${m//:/-}-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
echo "end t=$(el)"
