#!/bin/bash
# next245 (run 2026-12-03, round 42: docs/performance.md): the routed gate-up writes the down
# projection's int8 input itself (branch wip/gate-up-q8c c9cfce6, tools/wip/patches/gate-up-q8c.patch on main 8ab7ba6; binaries in /work/packs/gq:
# gate_up_q8_kernel, clusters of 4 CTAs a block of 32 rows, handed to CTA 0 one way; the quantizing launch between
# gate-up and combine goes). Two calls (carry limit):
#   bash tools/wip/next245.sh SHA check  -- carry .carry with the branch's kernel check, tests and libbw24 as new--:
#     kernel check moe (its "gemv_q8_gate_up_q8" rows: y, codes and scales bit-equal), GPU tests, GPU vs CPU
#   bash tools/wip/next245.sh SHA rows   -- carry .carry with main's bench as base-- and the branch's as new--: tg128 of
#     base, new, new with BW24_GATE_UP_Q8=0 (main's launches in the same binary), both MoE shapes, two rounds; JSON rows;
#     the 30B step traced on base and new where time is left (carry .carry/trace as well)
# Prediction: the ~1.2 us launch a layer goes and the handoff and quantizing add ~0.3-0.5 us to the gate-up's tail:
# 30B 649 -> ~660-670, 35B 573 -> ~580-585 (it keeps the shared expert's launches between gate-up and combine). Round
# 18's dense form of the idea measured +0.4 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
if [ "$2" = check ]; then
  kc_rows $SHA moe 'gemv_q8_gate_up_q8' 'routed gemv' 'moe down + combine'
  gpu_tests $SHA
else
  for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
    row base base $m tg128 "-p 16 -n 128 -r 2"
    row new new $m tg128 "-p 16 -n 128 -r 2"
    row q8-off new $m tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_Q8=0
  done; done
  json $SHA 480 qwen3-30b-a3b:Q4_K_M ""
  json $SHA 540 qwen3.6-35b-a3b:Q4_K_M ""
  # the 30B step traced on both, where the time allows (carry .carry/trace too)
  for b in base new; do [ $(el) -lt 500 ] && TRACE_BUILD=$b TRACE_LINES=16 TRACE_POS=12 \
    trace_row 30b-$b qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1"; done
fi
echo "end t=$(el)"
