#!/bin/bash
# next326 (prepared in round 58, not run): branch wip/router-room, the landed form of next325's BW24_STREAM_CAP2: the
# O projection before a MoE block's cluster router (and a delta net's out projection there) asks for the shared
# memory that leaves one router CTA room on every SM (cuda::CtaRoom, moe_gate_room), where two O CTAs an SM still
# fit (the 30B's 64 KB router CTAs; the 35B's 128 KB ones would need one, so its launches do not change). Kernel check
# moe (the moe_gate_room rows) and the GPU tests on the branch, then main (base) against it, alternated, and the
# branch's 30B JSON. Pack (two builds):
#   git checkout main && bash tools/wip/pack-bins.sh base HEAD bw24-bench
#   git checkout wip/router-room && bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check \
#     tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests && git checkout main
SHA=$1
source tools/wip/lib.sh
begin $SHA-router-room
kc $SHA moe; grep "moe_gate_room" "$OUT/kc-moe-$SHA.txt"; gpu_tests $SHA
for i in 1 2; do for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done; done
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
