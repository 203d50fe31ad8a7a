#!/bin/bash
# next330 (round 59): branch wip/carveout's BW24_SMEM_CARVEOUT=100 (every kernel prefers all 228 KB of an SM's L1 as
# shared memory: an SM configured for one kernel's smaller carveout cannot take a CTA of a kernel that needs more
# until it drains, which would cost PDL overlap; -2: the driver's choice a kernel, main) in one binary, alternated.
# Pack: bash tools/wip/pack-bins.sh car HEAD bw24-bench (on wip/carveout).
SHA=$1
source tools/wip/lib.sh
begin $SHA-carveout
for i in 1 2; do for c in -2 100; do row c$c car qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SMEM_CARVEOUT=$c; done; done
for i in 1 2; do for c in -2 100; do row c$c car qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SMEM_CARVEOUT=$c; done; done
for c in -2 100; do row c$c car qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_SMEM_CARVEOUT=$c; done
for c in -2 100; do row c$c car qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SMEM_CARVEOUT=$c; done
for c in -2 100; do row room0-c$c car qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SMEM_CARVEOUT=$c BW24_ROUTER_ROOM=0; done
echo "end t=$(el)"
