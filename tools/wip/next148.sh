#!/bin/bash
# next148 (carry .carry only): bash tools/wip/next148.sh SHA  (timeout 560) -- round 26's prepared next147 (run as this; its 27B rows print nothing: tg128 of a -n 64 run) plus the host part of a step; flash
# decode's tensor-core products at D = 256 (f16 and q8_0 caches; a head as two parts of 128 dims), branch
# wip/decode-mma-256 (tools/wip/patches/decode-mma-256.patch on main). main = main's bench.
# Pack (from a clean checkout of the branch): tools/wip/pack-bins.sh main main bw24-bench; tools/wip/pack-bins.sh new HEAD
# bw24-bench bw24-kernel-check tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests (with them pack-bins packs the
# libbw24.so.0 the model tests load). Host checks done: tools/emulate/decode_mma_fragments.py
# exact at D = 128 and 256; the D = 128 f16 instances' SASS identical to main's, q8_0's reordered integer index math only;
# ptxas -v: the D = 256 f16 / q8_0 instances at 128 registers with 8-40 bytes of spills (two CTAs an SM).
# Expect: kernel check attention / attention_rope / attention_bound all ok, the head-group rows bit-equal, the D = 256
# decode rows within 1e-5 of lib/ref; GPU tests passed. Prediction (round 26's trace: the scalar D = 256 split kernel
# 12.4-12.8 us a gated layer, the D = 128 tensor-core one ~7): Qwen3.5-9B Q4_K_M tg128 +1.5-2.5 % (8 gated layers),
# Qwen3.5-27B +1-2 % (16), Qwen3.6-35B-A3B +1-2 % (10); depth 4096 more (the scalar chain grows with the history).
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
for i in 1 2; do for b in main new; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 380 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do [ $(el) -lt 420 ] && row $b-d4096 $b qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -r 2 -d 4096"; done
for b in main new; do [ $(el) -lt 440 ] && row $b-q8kv $b qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -r 2 -d 4096 --kv q8_0"; done
for b in main new; do [ $(el) -lt 470 ] && row $b $b qwen3.5-27b:Q4_K_M tg128 "-p 16 -n 64 -r 2"; done
# The host's part of a step (BW24_GRAPH_REPLAYS, new build only): 1 / tok/s at k = 1 is host + graph, at k = 2 host + 2 graphs.
for k in 1 2 1 2; do [ $(el) -lt 520 ] && row new-replays$k new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GRAPH_REPLAYS=$k; done
echo "end t=$(el)"
