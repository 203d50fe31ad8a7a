#!/bin/bash
# Packed here (branch wip/down-ahead 642e33c, build-pack/dev): bw24-bench, the two GPU test programs and libbw24.so.0
# into .carry/bins/new--*.xz; carry [".carry"]. (Round 33 measured the same form as next199: docs/performance.md round 49.)
# next271 (round 49): wip/down-ahead. next270's ablation puts the 30B's routed down (int8 launch + down + combine) at
# 7.4 us a layer for 8.7 MB, the routed gate-up at 6.8 us for 14.2 MB (2.1 TB/s: DRAM has room beside it), and round
# 47's hot rows say the down + combine is ~1 us shorter with its experts in L2. The gate-up is the first launch that
# knows the picks and has hundreds of CTAs: each of its 768 CTAs (96 a pair) requests 1/96 of its pair's down slice
# into L2 (prefetch.global.L2, one line for threads 0-104: 13.4 KB a CTA, ~78 KB an SM) right after reading the id.
# Earlier L2 prefetches lost where they were concentrated on few CTAs (round 47) or beside latency-bound launches
# with no slack (rounds 35, 45); this one is spread over every SM inside a launch running at half the copy rate.
# Prediction: combine -0.7-1 us, gate-up +0-0.3 us: 30B tg128 +1.5-2.5 %; 35B less (its downs are Q4_K, 512 wide).
SHA=$1
source tools/wip/lib.sh
begin $SHA-down-ahead
BW24_DOWN_AHEAD=1 gpu_tests $SHA
for i in 1 2; do for d in 0 1 2; do
  row "ahead$d" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_DOWN_AHEAD=$d; done; done
for d in 0 1; do row "ahead$d" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_DOWN_AHEAD=$d; done
for d in 0 1; do row "ahead$d-d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_DOWN_AHEAD=$d; done
echo "rows t=$(el)"
[ $(el) -lt 300 ] && TRACE_POS=10 trace_row 30b-ahead0 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_DOWN_AHEAD=0
[ $(el) -lt 400 ] && TRACE_POS=10 trace_row 30b-ahead1 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_DOWN_AHEAD=1
echo "end t=$(el)"
