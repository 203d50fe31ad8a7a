#!/bin/bash
# next376 (round 65): timing diagnostics (wip/fold-diag c552d6e, BW24_FOLD_DIAG / BW24_FOLD_DIAG_IN): what is left between
# next375's producers with the plain deal and tail (3: 641.8) and the normed launches' ablation (667.5). 4: the norm's
# weight stored after the trigger (a candidate, right codes); 5: deal + tail + no cluster; 6: 5 and 4; DIAG_IN=1: the
# consumers' plain instances (no 1 / rms: wrong values).
SHA=$1
source tools/wip/lib.sh
begin $SHA-diag
for i in 1 2; do
  row fold diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row wlate diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=4
  row plainish diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=5
  row plainish-wlate diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG=6
  row in diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG_IN=1
  row in-plainish-wlate diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_DIAG_IN=1 BW24_FOLD_DIAG=6
  row ablate diag qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0 BW24_ABLATE=normed
done
echo "end t=$(el)"
