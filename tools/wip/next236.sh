#!/bin/bash
# next236 (not run: the session's device time was spent; carry .carry: wip/one-way 7818399 or tools/wip/patches/router-one-way.patch on main's bench and kernel check as "new"): bash tools/wip/next236.sh SHA -- the
# one-way logits handoff as it lands (no timing code): moe kernel check (cluster rows one way and through the
# barrier), tg128 of Qwen3-30B-A3B with it on and off (BW24_GATE_ONE_WAY=0). The session's last ~140 device seconds.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster' 'cluster barrier'
row on new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2"
row off new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_ONE_WAY=0
row on new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2"
echo "end t=$(el)"
