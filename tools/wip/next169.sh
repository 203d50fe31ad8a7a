#!/bin/bash
# next169 (carry .carry only): bash tools/wip/next169.sh SHA  (timeout 420) -- prepared in round 29, not run: has Qwen3-8B
# BF16 tg128 fallen since round 22 (JSON 220.9 on d93bff5, 215.0-215.3 on a46a5c0 / c7bb4af in round 29, different calls)?
# Both builds' rows alternated in one call. Pack: tools/wip/pack-bins.sh old d93bff5 bw24-bench; tools/wip/pack-bins.sh new
# HEAD bw24-bench (on main). Expect: if old reads ~5 tok/s above new in the same call, a change of rounds 23-29 cost BF16
# (then bisect with the round builds' packed benches); if both read alike, the calls' machines did.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2 3; do for b in old new; do [ $(el) -lt 330 ] && row $b $b qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2"; done; done
for b in old new; do [ $(el) -lt 380 ] && row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done
echo "end t=$(el)"
