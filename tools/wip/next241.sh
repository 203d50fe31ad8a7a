#!/bin/bash
# next241 (run 2026-12-03): main fab0905 (the router's one-way handoff and the tighter route, next240's "no-early" parts)
# checked: kernel check moe with its cluster rows, the async combine's rows (dc75e57's Q6_K offsets, first run here), GPU
# tests. Carry .carry with fab0905's kernel check, tests and libbw24 as new-- (the benches go in next242: carry limit).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster' 'cluster barrier' 'weights by cp.async' 'register loads'
gpu_tests $SHA
echo "end t=$(el)"
