#!/bin/bash
# next387 (round 71): next386's question (why the Q4_K gate-up moves 56.6 MB in ~15.9 us, ~3.6 TB/s, where the LM head
# streams at ~4.4 and the Q4_K downs at ~4.3) with a real candidate beside the diagnostic, one binary, alternated:
#  - BW24_GATEUP_BYMAT=1 (wip/gateup-bymat): a gate-up stage holds one matrix's 8 whole rows (K = 4096: one contiguous
#    18.4 KB span) instead of both matrices' 16 half rows of 1,152 bytes; the same sums in the same order (the same
#    bits: its kernel-check rows must read as main's in next384's kc-all file), each activation block loaded twice;
#  - BW24_DIAG_CONTIG=1 / 2 (next386's diagnostic): each stage copied from one contiguous span, garbage products;
# then the kernel checks of the gate-up instances with the switch, bw24-microbench bulk_stream's row-piece rows,
# main and the candidate traced at depth 0, and ncu's stall reasons over the streamed launches as time allows.
# Pack (on wip/gateup-bymat = main + patches/diag-contig.patch + patches/gateup-bymat.patch [+ patches/kv-ahead2.patch,
# next388's: one pack serves both calls], committed, from /work/main with a clean tree):
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-microbench bw24-kernel-check tests/bw24_model_tests \
#     tests/bw24_gpu_vs_cpu_tests
#   mkdir -p .carry/trace && cp build-dev/libbw24-kernel-trace.so tools/trace/step_profile.py \
#     /usr/local/cuda-13.0/lib/libcupti.so.13 .carry/trace/
# Run: bash tools/wip/next387.sh SHA, carrying [".carry"] (~18 MB beside the tree's ~36 MB).
SHA=$1
source tools/wip/lib.sh
begin $SHA-bymat
P="-p 512 -n 128 -r 2" D="-p 16 -n 128 -d 4096 -r 2"
for i in 1 2; do
  row main new qwen3-8b:Q4_K_M tg128 "$P"
  row bymat new qwen3-8b:Q4_K_M tg128 "$P" BW24_GATEUP_BYMAT=1
  row contig-gateup new qwen3-8b:Q4_K_M tg128 "$P" BW24_DIAG_CONTIG=1
done
row contig-all new qwen3-8b:Q4_K_M tg128 "$P" BW24_DIAG_CONTIG=2
for i in 1 2; do
  row main-d4096 new qwen3-8b:Q4_K_M tg128 "$D"
  row bymat-d4096 new qwen3-8b:Q4_K_M tg128 "$D" BW24_GATEUP_BYMAT=1
done
row contig-gateup-d4096 new qwen3-8b:Q4_K_M tg128 "$D" BW24_DIAG_CONTIG=1
row main new qwen3.5-9b:Q4_K_M tg128 "$P"
row bymat new qwen3.5-9b:Q4_K_M tg128 "$P" BW24_GATEUP_BYMAT=1
echo "rows t=$(el)"
# The kernel check draws its inputs from one generator in family order: main's rows of the same family, run alone,
# are what the switch's must equal (the same bits), not next384's kc-all rows.
kc $SHA-main gemv_q8_streamed
BW24_GATEUP_BYMAT=1 kc $SHA-bymat gemv_q8_streamed
diff <(grep "gemv_q8_streamed" $OUT/kc-gemv_q8_streamed-$SHA-main.txt) \
  <(grep "gemv_q8_streamed" $OUT/kc-gemv_q8_streamed-$SHA-bymat.txt) > /tmp/kc-diff.txt
echo "gemv_q8_streamed rows, main vs the switch: $(grep -c "^[<>]" /tmp/kc-diff.txt) differ (0: the same bits)"
head -8 /tmp/kc-diff.txt
rm $OUT/kc-gemv_q8_streamed-$SHA-main.txt
for f in gemv_q8_gate_up_q8 gemv_q8_norm_fold; do BW24_GATEUP_BYMAT=1 kc $SHA-bymat $f
  cat $OUT/kc-$f-$SHA-bymat.txt >> $OUT/kc-gemv_q8_streamed-$SHA-bymat.txt; rm $OUT/kc-$f-$SHA-bymat.txt; done
timeout 100 ./build-new/bw24-microbench --benchmark_min_time=0.2 \
  --benchmark_filter='bulk_stream/(1152/18432/3/[23]|3456/27648|18432/18432/3/2)' 2>&1 |
  grep -E "bulk_stream|rror" | tee $OUT/micro-bulk-$SHA.txt
echo "micro t=$(el)"
[ $(el) -lt 380 ] && TRACE_POS=0 TRACE_LINES=12 trace_row main-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
[ $(el) -lt 410 ] && TRACE_POS=0 TRACE_LINES=12 trace_row bymat-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" \
  BW24_GATEUP_BYMAT=1
B="./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 8 -r 1 --device 0"
ncu_stalls $OUT/ncu-gemv-$SHA.csv $((570 - $(el))) -k "regex:gemv_stream_kernel" --launch-skip 300 --launch-count 14 $B
# the switch's gate-up launches alone (mangled names: GemvOutE2 is the gate-up), if the call has time left
BW24_GATEUP_BYMAT=1 ncu_stalls $OUT/ncu-bymat-$SHA.csv $((585 - $(el))) --kernel-name-base mangled \
  -k "regex:GemvOutE2" --launch-skip 20 --launch-count 4 $B
echo "end t=$(el)"
