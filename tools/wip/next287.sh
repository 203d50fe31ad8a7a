#!/bin/bash
# Prepared in round 51, not run. Pack from branch wip/trigger-multi-timing (wip/trigger-multi plus round 33's flash
# timing stamps, ported): tools/wip/pack-bins.sh new HEAD bw24-bench (on that branch, clean tree).
# next287 (round 52, if next286's MULTI=2 does not pay): where a split CTA's time goes with the trigger first and
# after the wait, at 1-2 visible splits (`-p 16`, where the late trigger gained 1.4 %) and at 5-6 (`-p 512`, where it
# did not). BW24_FLASH_TIMING=1 prints, per CTA count, the last CTA's time at eight points after the first CTA's wait
# and each CTA's step between points (medians over the step's calls; ns).
SHA=$1
source tools/wip/lib.sh
begin $SHA-flash-timing
run_t() { local tag=$1 a=$2; shift 2
  env "$@" BW24_FLASH_TIMING=1 timeout 120 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $a --device 0 \
    > "$OUT/timing-$tag.txt" 2>&1; echo "$tag t=$(el)"; grep -E "tg128|flash timing|  [a-zA-Z]" "$OUT/timing-$tag.txt" | head -40; }
run_t short-first "-p 16 -n 128 -r 1" BW24_FLASH_LATE_TRIGGER=0
run_t short-late "-p 16 -n 128 -r 1"
for m in 0 1 2; do run_t p512-multi$m "-p 512 -n 128 -r 1" BW24_FLASH_TRIGGER_MULTI=$m; done
echo "end t=$(el)"
