#!/bin/bash
# next379 (round 67, for a device call after next377): every kernel check family twice on next377's pack (wip/defer
# 73c2642, packed as new with the tests): with no switch (main's instances: every kernel SASS-identical to main's since
# round 66's split, and b5fcdb6's group_tile is SASS-identical too), and with BW24_LEAN=1 BW24_LEAN_FLASH=1
# BW24_DEFER=1 (wip/lean-land-defer's instances, one for one). The last full run was 5c1fddc's (next293, 2,707 / 2,707);
# rounds 55-64 each ran only the families they touched. ~190 s a run (next293: 216 s with the GPU tests).
SHA=$1
source tools/wip/lib.sh
begin $SHA-kc-all
timeout 280 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all, main's instances) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
BW24_LEAN=1 BW24_LEAN_FLASH=1 BW24_DEFER=1 timeout 280 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA-lean-defer.txt" 2>&1
echo "kernel-check (all, lean + flash + defer) rc=$? $(tail -n 1 $OUT/kc-all-$SHA-lean-defer.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA-lean-defer.txt" | head -20
echo "end t=$(el)"
