#!/bin/bash
# next238 (prepared 2026-12-02, not run; superseded by next239, whose build has this change and a fix: the signal only inside pass()'s layer loop; carry .carry with wip/combine-early ba622ee's bench, kernel check and tests as
# "new": git checkout wip/combine-early && rm -f .carry/bins/* && bash tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests; packed on 2026-12-02 as /work/packs/early/early--*,
# rename early-- to new--): bash tools/wip/next238.sh SHA -- the routed down + combine copying its experts before its
# PDL wait where the router signalled this step's ids (MoeIdsReady). Kernel check moe (the router's signal, the combine
# with a matching and a stale word, bit-equal), GPU tests (the fused-launches test turns early_moe_ids off and compares),
# then tg128 A/B in one binary (BW24_MOE_EARLY_IDS=0 / 1), both MoE shapes, two rounds, and the 30B at depth 4096.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'ids signal' 'moe_gate cluster'
gpu_tests $SHA
for i in 1 2; do for e in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row early$e new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_EARLY_IDS=$e; done; done; done
for e in 0 1; do row early$e-d4096 new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MOE_EARLY_IDS=$e; done
echo "end t=$(el)"
