#!/bin/bash
# next5c (run from land5 = main + wip/hybrid + wip/dn-multi; carry .deps .carry): GPU tests of land5, the inline-merge
# threshold (32 / 8 / 1 visible splits) and wip/vprefetch on top, then ncu durations of a Qwen3-30B-A3B decode token.
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
for k in k8 k1; do ln -sfn $PWD/tests/data .carry/$k-src/tests/data; done
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 $4 > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA; cfg .carry/k8-src build-k8 k8 -DBW24_TESTS=OFF; cfg .carry/k1-src build-k1 k1 -DBW24_TESTS=OFF; cfg .carry/vpf-src build-vp vpf -DBW24_TESTS=OFF
( ninja -C build-main -j16 bw24-bench bw24-microbench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-k8 -j16 bw24-bench bw24-microbench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-k1 -j16 bw24-bench bw24-microbench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
( ninja -C build-vp -j16 bw24-bench bw24-microbench bw24-kernel-check > /tmp/b4.log 2>&1 || grep -A3 error /tmp/b4.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
timeout 60 ./build-main/bw24-kernel-check attention > "$OUT/kc-attention-land5.txt" 2>&1; echo "land5 kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-land5.txt)"
timeout 60 ./build-vp/bw24-kernel-check attention > "$OUT/kc-attention-vpf.txt" 2>&1; echo "vpf kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-vpf.txt)"
timeout 90 ./build-main/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-land5.txt" 2>&1; echo "land5 GPU tests rc=$?"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-land5.txt" | head -3
timeout 120 ./build-main/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-land5.txt" 2>&1; echo "land5 GPU vs CPU rc=$?"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-land5.txt" | head -3
echo "t=$(( $(date +%s)-t0 ))"
for b in main k8 k1 vp; do timeout 40 ./build-$b/bw24-microbench --benchmark_filter='flash_decode/(128|1024|4096|32768)/1/' 2>&1 | grep -E "^flash" | awk -v b=$b '{print b, $1, $2, $3}'; done
row() { local b=$1 m=$2 d=$3; ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d $d -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m d$d" '{print t " | " $7}'; }
for d in 4096 1024 0; do for b in main k8 k1 vp; do row $b qwen3-8b:Q4_K_M $d; done; done
row main qwen3-8b:Q4_K_M 4096; row k8 qwen3-8b:Q4_K_M 4096
row main qwen3.5-9b:Q4_K_M 0
echo "t=$(( $(date +%s)-t0 ))"
prof() { local m=$1 skip=$2 count=$3 tag=$4 P=16 N=8
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --csv --print-kernel-base function --launch-skip $skip --launch-count $count \
    ./build-main/bw24-bench -m synthetic:$m -p $P -n $N -r 1 --device 0 > $OUT/ncu-$tag.csv 2> $OUT/ncu-$tag.err
  echo "ncu $tag rc=$? t=$(( $(date +%s)-t0 ))"
  python3 - "$OUT/ncu-$tag.csv" <<'PY' || tail -5 "$OUT/ncu-$tag.csv"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value"); g = hdr.index("Grid Size"); b = hdr.index("Block Size")
tot = collections.defaultdict(float); cnt = collections.Counter(); shape = {}
for r in rows[1:]:
    key = r[k]; tot[key] += float(r[v].replace(",", "")) / 1000.0; cnt[key] += 1; shape[key] = r[g] + "x" + r[b]
s = sum(tot.values())
print(f"sum {s:.1f} us over {sum(cnt.values())} launches")
for key, t in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{t:9.1f} us {100*t/s:5.1f} % {cnt[key]:5d} x {t/cnt[key]:6.2f} us  {key}  {shape[key]}")
PY
}
prof qwen3-30b-a3b:Q4_K_M 3000 640 moe30b
echo "t=$(( $(date +%s)-t0 ))"
