#!/bin/bash
# next374 (round 64): a timing diagnostic (wip/fold-local, BW24_FOLD_LOCAL=1): the folding producers launched without a
# cluster and without the block exchange, each CTA rounding its 16 rows as a block of their own (wrong codes: the
# tokens are garbage, the graph's timing is the step's). How much of the fold's cost over the normed launches'
# ablation (next365: producers +0.8-1.0 us each) is the cluster and its exchange.
SHA=$1
source tools/wip/lib.sh
begin $SHA-local
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
for i in 1 2; do
  row fold new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row local new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_LOCAL=1
  row ablate new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0 BW24_ABLATE=normed
done
TRACE_POS=0 TRACE_LINES=14 trace_row 8b-local qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FOLD_LOCAL=1
echo "end t=$(el)"
