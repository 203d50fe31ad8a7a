#!/bin/bash
# next294 (round 53): wip/inline16 (a3237e1): the split kernel's last CTA merges up to 16 visible splits (warp w
# takes splits lo + w + 8 u, the first beside the (m, l) loads), so tokens at positions 1,024-2,047 skip the merge
# launch. base = main's bench (5c1fddc's device code). Rows decode at positions d + 1 .. d + 128: -d 1024 (9-10
# splits), -d 1536 (13-14), both with n_ctx under 2,048 (no merge launch in the branch; main launches it).
# Pack: the base bench from 5c1fddc's build as base--bw24-bench.xz; tools/wip/pack-bins.sh new HEAD bw24-bench
#   bw24-kernel-check on the branch.
# Prediction: +1-3 % at -d 1024 / 1536 (the merge launch's boundary, ~1-2 us a layer, against one or two L2 round
# trips in the last CTA); -d 512 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA-inline16
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'pos 1900'
check_rows $SHA attention 'pos 1200'
for i in 1 2; do for b in base new; do for d in 1024 1536; do
  row $b-d$d $b qwen3-8b:Q4_K_M tg128 "-p 0 -d $d -n 128 -r 2"; done; done; done
for b in base new; do for d in 1024 1536; do row $b-d$d $b qwen3-30b-a3b:Q4_K_M tg128 "-p 0 -d $d -n 128 -r 2"; done; done
for b in base new; do row $b-d512 $b qwen3-8b:Q4_K_M tg128 "-p 0 -d 512 -n 128 -r 2"; done
echo "end t=$(el)"
