#!/bin/bash
# next239 (prepared 2026-12-02, not run; the three prepared router / combine changes together: branch wip/moe-all
# d3f5fe2 (tools/wip/patches/moe-all.patch) = router-one-way + route-tight + combine-early + the gate-up's early L2
# prefetch (BW24_GATEUP_EARLY=1, off by default) on main 81162fc. Carry .carry with
# /work/packs/all/all--* renamed to new--* (its bench, kernel check, tests, libbw24) and main's bench as base--
# (build-pack/ce7971d/bw24-bench: main's device code since ce7971d)): bash tools/wip/next239.sh SHA -- kernel check moe,
# GPU tests, then tg128 of base against new, and new with each part turned off in the same binary
# (BW24_GATE_ONE_WAY=0, BW24_MOE_EARLY_IDS=0) and with the gate-up's early prefetch on (BW24_GATEUP_EARLY=1), both MoE shapes, two rounds; the JSON rows of new.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster' 'ids signal' 'cluster barrier'
[ -n "$SKIP_GPU_TESTS" ] || gpu_tests $SHA  # next240 ran without them (carry limit)
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row base base $m tg128 "-p 16 -n 128 -r 2"
  row all new $m tg128 "-p 16 -n 128 -r 2"
  row no-one-way new $m tg128 "-p 16 -n 128 -r 2" BW24_GATE_ONE_WAY=0
  row no-early new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_EARLY_IDS=0
  row gateup-early new $m tg128 "-p 16 -n 128 -r 2" BW24_GATEUP_EARLY=1
  row base base $m tg128 "-p 16 -n 128 -r 2"
  row all new $m tg128 "-p 16 -n 128 -r 2"
done
# ~450 s to here; the JSON rows (~75 s) only if time is left, else in the next call
json $SHA 480 qwen3-30b-a3b:Q4_K_M ""
json $SHA 540 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
