#!/bin/bash
# next249 (round 43: docs/performance.md): run-ahead decoding (branch wip/run-ahead; Runner::queue_step: each decode step
# queued before the host reads the token of the one before; the step gathers its embedding row on the device,
# cuda::embed_token, and the token choice writes the next step's position and hold flag, cuda::StepNext). Calls:
#   bash tools/wip/next249.sh SHA check  -- carry .carry with the branch's kernel check, tests and libbw24 as new--:
#     kernel check embed / argmax / sample / dequant / gdn, GPU tests (the new "CUDA run-ahead decoding stops where the
#     serial decode stops" among them), GPU vs CPU
#   bash tools/wip/next249.sh SHA dense  -- carry .carry with main's bench as base-- and the branch's as new--: tg128 of
#     base, new and new with BW24_RUN_AHEAD=0 (the serial loop in the same binary), Qwen3-8B and Qwen3.5-9B, two rounds;
#     the 8B's JSON row
#   bash tools/wip/next249.sh SHA moe    -- the same for Qwen3-30B-A3B and Qwen3.6-35B-A3B; the 30B's JSON row
#   bash tools/wip/next249.sh SHA hyb    -- the hybrids gained less (9B +0.5 % over its serial loop, 8B +1.4 %); the
#     tree now has gdn_decode's hold as predicated stores (82 registers as on main; 128dd50's early return took 90) and
#     the choice stored into the pinned slot by the choice kernel (no 4-byte copy behind it; BW24_TOKEN_COPY=1 keeps
#     the copy): base and new (the tree's bench) for Qwen3.5-9B and Qwen3.6-35B-A3B, two rounds; new with and
#     without the copy for Qwen3-8B and Qwen3-30B-A3B; new's JSON rows of the hybrids
#   bash tools/wip/next249.sh SHA final -- carry .carry with the landed tree's kernel check and tests as new--:
#     kernel check gdn and embed, GPU tests and GPU vs CPU (the merge-boundary run-ahead case among them)
# Prediction: the host's part of a step (11-26 us measured, rounds 27 and 33) less the choice and copy the device now
# runs between graphs (~3-4 us): +0.5-1 % on the 8B (590 -> ~595), +1-1.5 % on the 9B and the MoEs.
SHA=$1
source tools/wip/lib.sh
begin $SHA-$2
if [ "$2" = check ]; then
  kc_one $SHA embed argmax sample dequant gdn
  check_rows $SHA embed 'embed_token'
  check_rows $SHA embed 'StepNext'
  gpu_tests $SHA
  grep -B2 -A12 "run-ahead" "$OUT/gpu-tests-$SHA.txt" | head -40
elif [ "$2" = final ]; then
  kc_one $SHA gdn embed
  gpu_tests $SHA
elif [ "$2" = hyb ]; then
  for i in 1 2; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
    for b in base new; do row $b $b $m tg128 "-p 16 -n 128 -r 2"; done
  done; done
  for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
    row new new $m tg128 "-p 16 -n 128 -r 2"
    row copy new $m tg128 "-p 16 -n 128 -r 2" BW24_TOKEN_COPY=1
  done
  json $SHA 420 qwen3.5-9b:Q4_K_M ""
  json $SHA 480 qwen3.6-35b-a3b:Q4_K_M ""
else
  if [ "$2" = dense ]; then shapes="qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M"; else shapes="qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M"; fi
  for i in 1 2; do for m in $shapes; do
    row base base $m tg128 "-p 16 -n 128 -r 2"
    row new new $m tg128 "-p 16 -n 128 -r 2"
    [ $i = 1 ] && row serial new $m tg128 "-p 16 -n 128 -r 2" BW24_RUN_AHEAD=0
  done; done
  if [ "$2" = dense ]; then json $SHA 500 qwen3-8b:Q4_K_M ""; else json $SHA 480 qwen3-30b-a3b:Q4_K_M ""; fi
fi
echo "end t=$(el)"
