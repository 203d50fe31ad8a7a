#!/bin/bash
# next198 (prepared in round 33, not run; carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next198.sh SHA
# (timeout 420) -- the rope angles of a one-token step once (cuda::rope_table, launched before layer 0) and loaded by
# flash decode after its PDL wait with the query rows, instead of a double sincos a pair in every split CTA before the
# wait (next197's timing build: a split CTA's part before the wait 4.6 us at depth 4096, 2.0 us at depth 0; the last
# CTA passed its wait 0.8 us after the first, 4.9 us at p90). Branch wip/rope-table, tools/wip/patches/rope-table.patch
# (on main b648fa5): one binary, BW24_ROPE_TABLE=0 the old path. Pack from the branch (clean tree, HEAD):
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check
# Kernel check first (new rows "flash_decode + rope from rope_table (bits)": the same bits as qk_rope_store then
# flash_decode, int8 O and caches too). Prediction: Qwen3-8B at depth 4096 +1-3 % (f16 depth ratio toward 85 %),
# depth 0 within noise (one launch more a step, ~1-2 us, against ~0.3 us a layer).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA attention_rope
check_rows $SHA attention_rope 'rope_table'
for i in 1 2; do for t in 0 1; do
  row "table=$t" new qwen3-8b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_ROPE_TABLE=$t; done; done
for t in 0 1; do row "table=$t q8_0" new qwen3-8b:Q4_K_M tg128 "-p 16 -d 4096 -r 2 --kv q8_0" BW24_ROPE_TABLE=$t; done
for t in 0 1; do row "table=$t d0" new qwen3-8b:Q4_K_M tg128 "-p 16 -r 3" BW24_ROPE_TABLE=$t; done
for t in 0 1; do row "table=$t" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_ROPE_TABLE=$t; done
for t in 0 1; do row "table=$t" new qwen3.5-9b:Q4_K_M tg128 "-p 16 -r 3" BW24_ROPE_TABLE=$t; done
echo "end t=$(el)"
# round 34: GPU tests of main 3361cf0 (8d936dd's router row had none), packed as build-t
if [ -e build-t/tests/bw24_model_tests ]; then
  LD_LIBRARY_PATH=$PWD/build-t:$LD_LIBRARY_PATH timeout 100 ./build-t/tests/bw24_model_tests "[gpu]" > /tmp/gt.txt 2>&1
  echo "main GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" /tmp/gt.txt | head -3
  LD_LIBRARY_PATH=$PWD/build-t:$LD_LIBRARY_PATH timeout 120 ./build-t/tests/bw24_gpu_vs_cpu_tests "[gpu]" > /tmp/gv.txt 2>&1
  echo "main GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" /tmp/gv.txt | head -5
fi
echo "end2 t=$(el)"
