#!/bin/bash
# next88 (carry .carry only):  bash tools/wip/next88.sh SHA  (timeout_s 360)
# The whole kernel check (every family) of main SHA (3e9bb71 = 6ab4586's code), one process, into one file; its
# summary line and any failure. Not a timing run.
SHA=$1
source tools/wip/lib.sh
begin $SHA-next88
timeout 320 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
grep -c " ok " "$OUT/kc-all-$SHA.txt"
