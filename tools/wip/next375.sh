#!/bin/bash
# next375 (round 65): a timing diagnostic (wip/fold-diag, BW24_FOLD_DIAG): the folding producers with the plain
# interleaved deal (1: CTA b takes groups b, b + grid; the codes wrong), with the plain add's tail (2: no consumers'
# barrier, no exchange, no rounding; the codes stale) and both (3), against the fold and the normed launches' ablation.
# Which of the producers' differences from a plain add costs their ~0.9 us a launch (next365, next374).
SHA=$1
source tools/wip/lib.sh
begin $SHA-diag
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
for i in 1 2; do
  row fold diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row deal diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=1
  row tail diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=2
  row both diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=3
  row ablate diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0 BW24_ABLATE=normed
done
TRACE_BUILD=diag TRACE_POS=0 TRACE_LINES=14 trace_row 8b-tail qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FOLD_DIAG=2
TRACE_BUILD=diag TRACE_POS=0 TRACE_LINES=14 trace_row 8b-fold qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
echo "end t=$(el)"
