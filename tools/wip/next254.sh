#!/bin/bash
# next254 (round 45): next253 on main (wip/cig2), its check and A/B in one call. Was: next253: a queued greedy step's argmax captured as the step graph's last kernel (branch wip/choice-in-graph;
# cuda::StepNext's captured form: the position read and advanced on the device, the pinned slot of its parity, the stops
# gated by a device flag set_step writes), with the stop loop unrolled (no stack frame). Calls:
#   bash tools/wip/next253.sh SHA check -- carry .carry with the branch's kernel check, tests and libbw24 as new--:
#     kernel check argmax (the "captured" rows), sample, embed; GPU tests (the run-ahead cases compare with the serial
#     decode, which keeps the choice outside the graph)
#   bash tools/wip/next253.sh SHA ab    -- carry .carry with the branch's bench as new--: tg128 of the four shapes with
#     BW24_CHOICE_IN_GRAPH=0 / 1 alternated, two rounds; bw24-microbench is not needed
# Prediction: the argmax PDL-chained after the LM head and without its stack frame: 2-4 us a step, +0.1-0.25 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-$2
if [ "$2" = check ] || [ "$2" = both ]; then
  kc_one $SHA argmax sample embed
  check_rows $SHA argmax 'captured'
  gpu_tests $SHA
fi; if [ "$2" = ab ] || [ "$2" = both ]; then
  for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
    row after new $m tg128 "-p 16 -n 128 -r 2" BW24_CHOICE_IN_GRAPH=0
    row in-graph new $m tg128 "-p 16 -n 128 -r 2"
  done; done
fi
echo "end t=$(el)"
