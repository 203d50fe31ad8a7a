#!/bin/bash
# next251 (round 44: docs/performance.md): the decode step's rope table first and the embedding gather beside it,
# before its PDL wait (5726a19; BW24_EMBED_BESIDE=0: the gather first, then the table, as before). Calls:
#   bash tools/wip/next251.sh SHA ab -- carry .carry with the tree's bench, tests and libbw24 as new--: GPU tests,
#     then tg128 of the four shapes with the gather beside and before, alternated, two rounds
# Prediction: the step's first two segments (4.0 + 3.2 us in next250's trace) lose about the gather's 2 us: +0.1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-$2
if [ "$2" = ab ]; then
  gpu_tests $SHA
  for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
    row before new $m tg128 "-p 16 -n 128 -r 2" BW24_EMBED_BESIDE=0
    row beside new $m tg128 "-p 16 -n 128 -r 2"
  done; done
fi
echo "end t=$(el)"
# next251 json: main 37f6592's bench (the tree after the revert of 5726a19: the same device code) as new--: the JSON rows
# of the hybrids and the 8B's q8_0-KV depth row
if [ "$2" = json ]; then
  json $SHA 300 qwen3.5-9b:Q4_K_M ""
  json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
  json $SHA 480 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
  echo "end t=$(el)"
fi
# next251 q8kv: the 8B's q8_0-KV depth row twice more (next251 json read 564.0 / 513.0 = 91.0 %)
if [ "$2" = q8kv ]; then
  json $SHA 200 qwen3-8b:Q4_K_M "-q8kv-2" --kv q8_0
  json $SHA 300 qwen3-8b:Q4_K_M "-q8kv-3" --kv q8_0
  echo "end t=$(el)"
fi
# next251 rope: BW24_ROPE_TABLE=0 (flash decode computes its angles, no table launch at the step's start) against the
# table, now that the steps run ahead (round 34 landed the table)
if [ "$2" = rope ]; then
  for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do
    row table new $m tg128 "-p 16 -n 128 -r 2"
    row no-table new $m tg128 "-p 16 -n 128 -r 2" BW24_ROPE_TABLE=0
  done; done
  echo "end t=$(el)"
fi
