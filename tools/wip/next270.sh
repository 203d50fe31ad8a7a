#!/bin/bash
# Packed here (main 9e68009, build-pack/dev): bw24-bench into .carry/bins/new--bw24-bench.xz; carry [".carry"].
# next270 (round 49): where the step goes on today's main (9e68009), by ablation (BW24_ABLATE leaves launches out of
# the captured one-token step; the tokens are garbage, the timing is the graph's): what is left of Qwen3-8B and
# Qwen3-30B-A3B when the norms, the attention chain or the MoE router are taken out, against the targets (660 / 700).
# Then the acceptance JSON rows of main.
SHA=$1
source tools/wip/lib.sh
begin $SHA-ablate
A="-p 16 -n 128 -r 2"
for p in none norm attn,rope norm,attn,rope qkv,o gateup,down norm,attn,rope,qkv,o lmhead; do
  row "abl-$p" new qwen3-8b:Q4_K_M tg128 "$A" BW24_ABLATE=$p; done
echo "8b t=$(el)"
for p in none norm attn,rope norm,attn,rope moegate moegate,moeup,moedown norm,attn,rope,qkv,o moeup moedown; do
  row "abl-$p" new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_ABLATE=$p; done
echo "30b t=$(el)"
json $SHA 420 qwen3-8b:Q4_K_M ""
json $SHA 470 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
