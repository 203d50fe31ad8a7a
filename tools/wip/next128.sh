#!/bin/bash
# next128 (carry .carry only): bash tools/wip/next128.sh  (timeout 300). d4 (wip/diag-q6k, WRONG outputs): every streamed
# launch copies a stage's 8 row pieces as one bulk copy of the tensor's bytes (each byte once), the reads a layout of
# row-group tiles would make, against main's one copy a row piece and plane (Q4_K 8, Q8_0 16, Q6_K 32 a stage).
source tools/wip/lib.sh
begin next128
for i in 1 2; do for b in main d4; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3-8b:Q8_0; do
  row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
echo "end t=$(el)"
