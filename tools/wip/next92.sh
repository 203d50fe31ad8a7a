#!/bin/bash
# next92 (carry .carry only): bash tools/wip/next92.sh  (timeout_s 300)
# The kernel-boundary probe (benchmarks/chain_probe.cu, bw24-microbench decode_chain): a Qwen3-8B-like step (36 layers
# of 7 dependent phases + lm_head, 4.42 GB) as one launch a phase (PDL / plain, graph) against one persistent launch
# with a grid counter between phases, and the same code with no dependencies (floor); 1-3 CTAs an SM, weights ahead.
# Prediction (round 12's count): chain ~1.5-2 us a boundary, the counter ~0.5 us: persistent ~1.3 ms against ~1.6 ms.
source tools/wip/lib.sh
begin ${1:-next92}
timeout 150 ./build-probe/bw24-microbench --benchmark_filter=decode_chain 2>&1 | tee "$OUT/decode-chain.txt" | grep -v "^\*\*\*"
echo "t=$(el)"
row base base qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"
echo "end t=$(el)"
