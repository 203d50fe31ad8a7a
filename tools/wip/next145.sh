#!/bin/bash
# next145 (carry .carry only): bash tools/wip/next145.sh SHA  (timeout 300) -- round 26: the gemv kernel-check families
# again with the streamed check's small shapes measured against sum |w x| (next144: two 1 x 256 Q4_K rows at 2.3e-5 of
# themselves, a cancellation). Pack: tools/wip/pack-bins.sh new HEAD bw24-kernel-check.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gemv
grep -E "1 x 256" $OUT/kc-gemv-$SHA.txt | head -12
echo "end t=$(el)"
