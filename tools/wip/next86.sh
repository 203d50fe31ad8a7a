#!/bin/bash
# next86 (carry .carry only):  bash tools/wip/next86.sh SHA  (timeout_s 300)
# The acceptance JSON of every other shape at one commit (main SHA = 6ab4586, keys ahead): rows last measured at
# a2de8ec / ffff370. Prediction: equal to those within ~1 % (the change only touches depth 4096 rows of the four-head
# instance: 30B and the 9B / 27B / 35B at depth run other instances).
SHA=$1
source tools/wip/lib.sh
begin $SHA-next86
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for mq in qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:Q8_0 qwen3-8b:BF16 qwen3.5-9b:Q8_0 qwen3.6-35b-a3b:Q4_K_M qwen3.5-27b:Q4_K_M; do
  [ $(el) -lt 230 ] && timeout 70 ./build-new/bw24-bench -m synthetic:$mq $J --json "$OUT/$SHA-${mq/:/-}-h200.json" | grep -E "tg128|pp512"
  echo "t=$(el)"; done
