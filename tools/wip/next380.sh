#!/bin/bash
# next380 (round 69, for a device call): wip/kv-rotate-cuda e5ea0f1, the model option kv_rotate on CUDA (qk_rope_store
# rotates q, k and v by lib/kv's Walsh-Hadamard blocks; hadamard_rows turns O back; the fused RoPE and O epilogue stand
# aside for rotated sessions). Its pack is build-pack/rot-e5ea0f1.tar.xz (this machine, build-dev at e5ea0f1: bench,
# kernel check, both GPU test programs, libbw24.so.0). Before the call, make it the carried pack (the carry holds one):
#   mv .carry/bins/new.tar.xz build-pack/new-73c2642.tar.xz; cp build-pack/rot-e5ea0f1.tar.xz .carry/bins/new.tar.xz
# then run(carry [".carry"], timeout 600): bash tools/wip/next380.sh e5ea0f1; afterwards move next377's pack back.
# Checks: the kernel-check families it touches (qk_rope with the new "rotated" rows, hadamard_rows: exact against
# lib/kv; attention, whose fused path now refuses rotation arguments), the GPU tests (the new [gpu] case compares
# rotated q8_0 / q4_0 caches with the CPU reference on tiny-qwen3 and tiny-qwen35moe). Then what rotation costs:
# Qwen3-8B Q4_K_M tg128 with a q4_0 cache, plain against kv_rotate=1 (prediction: -4 to -6 %, the two launches a
# layer and the unfused O quantization, ~1.5 us each x 36), and the same with q8_0 at depth 4096. ~300 s.
SHA=$1
source tools/wip/lib.sh
begin $SHA-kv-rotate
kc_one $SHA qk_rope hadamard_rows attention
check_rows $SHA qk_rope 'rotated'; check_rows $SHA qk_rope 'hadamard_rows'
gpu_tests $SHA
grep -E "rotated|kv_rotate" -A3 "$OUT/gpu-tests-$SHA.txt" | grep -E "gpu vs cpu|FAILED|with expansion" | head -12
for kv in q4_0 q8_0; do for o in "" "--option kv_rotate=1"; do
  row "$kv ${o:-plain}" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2 --kv $kv $o"
  row "$kv ${o:-plain} d4096" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv $kv $o"
done; done
echo "end t=$(el)"
