#!/bin/bash
# next250 (round 44: docs/performance.md): main 8be6806 against the round-43 base, and the zero-copy choice (branch
# wip/zc: main + the choice kernel storing the token into the pinned ring slot, BW24_TOKEN_COPY=1 for the copy). Calls:
#   bash tools/wip/next250.sh SHA rows -- carry .carry with base-- (main f7501c6's bench), new-- (main 8be6806's bench),
#     zc-- (wip/zc's bench) and zck-- (wip/zc's kernel check): kernel check argmax / sample of wip/zc (the pinned slot
#     read back), then tg128 of the hybrids base / main (predicated gdn stores, capture on an idle stream: unmeasured
#     in round 43) and of the 8B and the 30B main / zc / zc with the copy, two rounds; JSON rows of main's hybrids
#   bash tools/wip/next250.sh SHA final -- carry .carry with main's (the zero-copy choice landed) bench, tests and
#     libbw24 as new--, and tools/trace as .carry/trace: GPU tests; the 9B and the 8B traced, run ahead and serial
#     (why the hybrids gain less: the position-0 segment is the gap between steps); JSON rows of the 8B and the 30B
# Prediction: hybrids main = 128dd50's rows (570 / 575), the zero-copy choice +0.1-0.2 % (2-4 us a step).
SHA=$1
source tools/wip/lib.sh
begin $SHA-$2
if [ "$2" = rows ]; then
  KC_BUILD=zck kc_one zc argmax sample
  check_rows zc argmax 'StepNext'
  for i in 1 2; do
    for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do for b in base new; do row $b $b $m tg128 "-p 16 -n 128 -r 2"; done; done
    for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
      row new new $m tg128 "-p 16 -n 128 -r 2"
      row zc zc $m tg128 "-p 16 -n 128 -r 2"
      row zc-copy zc $m tg128 "-p 16 -n 128 -r 2" BW24_TOKEN_COPY=1
    done
  done
  json $SHA 470 qwen3.5-9b:Q4_K_M ""
  json $SHA 500 qwen3.6-35b-a3b:Q4_K_M ""
elif [ "$2" = final ]; then
  gpu_tests $SHA
  for m in qwen3.5-9b:Q4_K_M qwen3-8b:Q4_K_M; do
    TRACE_POS=3 trace_row ahead-${m%%:*} $m "-p 16 -n 128 -r 1"
    TRACE_POS=3 trace_row serial-${m%%:*} $m "-p 16 -n 128 -r 1" BW24_RUN_AHEAD=0
  done
  json $SHA 400 qwen3-8b:Q4_K_M ""
  json $SHA 480 qwen3-30b-a3b:Q4_K_M ""
fi
echo "end t=$(el)"
