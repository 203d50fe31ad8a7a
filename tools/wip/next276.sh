#!/bin/bash
# next276 (round 50): the combine's pipelined forms 3 and 4 (wip/combine-pipe 2a1a206; next275 measured form 2 at
# -1.9 %), checked and measured against round 39's form (BW24_COMBINE_PIPE=0) in one binary; then main 916e530's
# acceptance JSON (Qwen3-30B-A3B, Qwen3-8B; bins: new = the branch's bench and kernel check, main = main's bench).
# PIPE=2: the expert id's load issued before the staging's copies, the staging before the weights (which form 2 put
# behind the staging). PIPE=3: round 39's order (id, weights, register staging), the weights in a group a row, each
# row's dot once its group landed. Prediction: if form 2 lost by delaying the id (so the weights), form 3 recovers
# that and keeps the staging ahead: 0 to +1.5 %; form 4 isolates the pipelined dot: 0 to +1 %.
SHA=$1 MAIN=$2
source tools/wip/lib.sh
begin $SHA-combine-pipe2
for p in 2 3; do export BW24_COMBINE_PIPE=$p; kc $SHA moe; check_rows $SHA moe 'moe down + combine'
  cp "$OUT/kc-moe-$SHA.txt" "$OUT/kc-moe-$SHA-pipe$p.txt"; done; unset BW24_COMBINE_PIPE
for i in 1 2; do for p in 0 2 3; do
  row "pipe$p" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=$p; done; done
for p in 0 2 3; do row "pipe$p" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=$p; done
echo "rows t=$(el)"
JSON_BUILD=main json $MAIN 400 qwen3-30b-a3b:Q4_K_M ""
JSON_BUILD=main json $MAIN 440 qwen3-8b:Q4_K_M ""
echo "end t=$(el)"
