#!/bin/bash
# next205 (round 35; carry .carry): bash tools/wip/next205.sh SHA (timeout 560). One binary (wip/gate-cluster + the
# FFN-ahead experiment, bafbb30): (1) round 34's prepared cluster router (next204's rows: kernel check moe, its
# "moe_gate cluster" rows, GPU tests with it on, tg128 A/B on the two MoE shapes); (2) BW24_FFN_AHEAD=MB: flash
# decode's CTAs pull the last MB / 2 of the layer's gate and up weights into L2 (BW24_FFN_AHEAD_AT=1 after the PDL
# wait, 2 after P V), while the attention chain leaves DRAM idle. Prediction (2): +2-6 % on Qwen3-8B if the gate-up's
# post-wait part is DRAM bound; nothing if it is its consumers'.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe_gate cluster'
export BW24_GATE_CLUSTER=1; gpu_tests $SHA; unset BW24_GATE_CLUSTER
for i in 1 2; do for v in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row "cluster=$v" new $m tg128 "-p 16 -r 3" BW24_GATE_CLUSTER=$v; done; done; done
echo "cluster done t=$(el)"
for i in 1 2; do for c in "0 1" "16 1" "16 2" "32 2" "8 2"; do set -- $c
  row "ahead=$1 at=$2" new qwen3-8b:Q4_K_M tg128 "-p 16 -r 3" BW24_FFN_AHEAD=$1 BW24_FFN_AHEAD_AT=$2; done; done
for c in "0 1" "16 2"; do set -- $c
  row "ahead=$1 at=$2 d4096" new qwen3-8b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_FFN_AHEAD=$1 BW24_FFN_AHEAD_AT=$2; done
for v in 0 1; do row "cluster=$v d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_GATE_CLUSTER=$v; done
echo "end t=$(el)"
