#!/bin/bash
# next106 (carry .carry only): bash tools/wip/next106.sh SHA  (timeout 560)
# new = wip/q8-stream SHA (ab3d85a) = main's candidate 7a56609 (cursor + row groups dealt in turn) plus Q8_0 on the
# streamed GEMV behind BW24_STREAM_Q8=1 (default off). Every gemv_stream instance of 7a56609 has the same SASS in this
# build (18/18), so the default-off checks and JSON rows verify 7a56609.
# Q8_0 streamed (Q80Stream: 8 Q8_0 blocks a 256-weight "block", pieces of 8, stage 17.4 KB, three CTAs an SM, 72
# registers): prediction Qwen3-8B Q8_0 tg128 322 -> ~360-400 (the BF16 streamed launches move ~3.6 TB/s; Q8_0's
# warp-per-row kernel ~2.8 TB/s).
SHA=$1
source tools/wip/lib.sh
begin $SHA
BW24_STREAM_Q8=1 kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float gemv_float_multi gemv_q8
check_rows $SHA gemv_q8_streamed 'Q8_0'
gpu_tests $SHA
BW24_STREAM_Q8=1 timeout 120 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > /tmp/gvc-q8.txt 2>&1
echo "GPU vs CPU, Q8_0 streamed: rc=$? $(grep -E 'All tests|test cases' /tmp/gvc-q8.txt | head -2) t=$(el)"
A="-p 16 -n 128 -r 3"
for i in 1 2; do
  row off new qwen3-8b:Q8_0 tg128 "$A"; row q8 new qwen3-8b:Q8_0 tg128 "$A" BW24_STREAM_Q8=1
  row off new qwen3-0.6b:Q8_0 tg128 "$A"; row q8 new qwen3-0.6b:Q8_0 tg128 "$A" BW24_STREAM_Q8=1; done
echo "t=$(el)"
BW24_STREAM_Q8=1 json $SHA 420 qwen3-8b:Q8_0 -q8stream
json $SHA 440 qwen3-8b:BF16 ""; json $SHA 460 qwen3-8b:Q4_K_M ""; json $SHA 470 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 480 qwen3-30b-a3b:Q4_K_M ""; json $SHA 490 qwen3.6-35b-a3b:Q4_K_M ""; json $SHA 500 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
