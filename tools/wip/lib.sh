# Shared by the device A/B scripts (source tools/wip/lib.sh from the repository root on the device):
# the environment, the stories260K fixture where the tests look for it, configure, timing and a bench row.
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
el() { echo $(( $(date +%s)-t0 )); }
mkdir -p ../shared/models/reference && cp .carry/stories260K.gguf ../shared/models/ &&
  cp .carry/stories260K_greedy_reference.json ../shared/models/reference/
# cfg SRC BUILD SHA [cmake args...]
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON \
  -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
# row LABEL BUILD SHAPE TEST "BENCH ARGS" [ENV=VALUE...]: the TEST row's tok/s of build-BUILD/bw24-bench
row() { local t=$1 b=$2 m=$3 k=$4 a=$5; shift 5; env "$@" timeout 90 ./build-$b/bw24-bench -m "synthetic:$m" $a --device 0 2>&1 |
  grep -E "$k|rror" | awk -F'|' -v t="$t $m $k" '{print t " | " $7}'; }
# build_ab SHA [TARGETS...]: .carry/main-src's bw24-bench as build-main beside the working tree's bw24-bench and
# TARGETS as build-new (SHA: the candidate's commit, computed where git metadata is current), both at once
build_ab() { cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $1
  ( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
  ( ninja -C build-new -j16 bw24-bench "${@:2}" > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
  wait; echo "built t=$(el)"; }
# kc SHA FAMILY...: build-new's (build-$KC_BUILD's where set) kernel check of each family into $OUT, its last line and any failure. A family is every
# check whose name contains it ("gemv_q8" is gemv_q8, gemv_q8_multi and gemv_q8_streamed: ~150 s, past next121's 120 s)
kc() { local sha=$1 f; shift; for f in "$@"; do timeout 200 ./build-${KC_BUILD:-new}/bw24-kernel-check $f > "$OUT/kc-$f-$sha.txt" 2>&1
  echo "kernel-check $f rc=$? $(tail -n 1 $OUT/kc-$f-$sha.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$sha.txt" | head -12; done; }
# kc_rows SHA FAMILY PATTERN...: kc of one family, then check_rows of each PATTERN in its file
kc_rows() { local sha=$1 f=$2 p; shift 2; kc $sha $f; for p in "$@"; do check_rows $sha $f "$p"; done; }
# kc_one SHA FAMILY...: kc, then the later families' results appended to the first's file (a call brings back few files)
kc_one() { local sha=$1 first=$2 f; kc "$@"; shift 2
  for f in "$@"; do cat "$OUT/kc-$f-$sha.txt" >> "$OUT/kc-$first-$sha.txt"; rm "$OUT/kc-$f-$sha.txt"; done; }
# check_rows SHA FAMILY PATTERN: how many rows of the family's file match PATTERN, and how many of those are not ok
check_rows() { local f="$OUT/kc-$2-$1.txt"; echo "'$3' rows: $(grep -c "$3" "$f"), not ok: $(grep "$3" "$f" | grep -vc ' ok ')"; }
# json SHA LIMIT SHAPE TAG [BENCH ARGS...]: build-new's (build-$JSON_BUILD's where set) acceptance row of SHAPE (-p 512 -n 128 -d 0,4096 -r 2) into
# $OUT/SHA-SHAPE(TAG)-CARD.json (CARD from begin: h200, h100, or gpu) and its pp512 / tg128 lines, unless the script has already run LIMIT seconds
json() { local sha=$1 lim=$2 m=$3 tag=$4; shift 4; [ $(el) -lt $lim ] || return 0
  timeout 60 ./build-${JSON_BUILD:-new}/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 "$@" \
    --json "$OUT/$sha-${m/:/-}$tag-${CARD:-gpu}.json" | grep -E "pp512|tg128" | sed "s/^/$m$tag /"; }
# main_checks SHA: main's checks on the GPU with build-new (packed with both test programs and the kernel check): the
# GPU tests, kernel check attention, and the acceptance JSONs of Qwen3-8B (f16 and q8_0 KV), Qwen3-30B-A3B and
# Qwen3.5-9B
main_checks() { gpu_tests $1; kc $1 attention
  json $1 400 qwen3-8b:Q4_K_M ""; json $1 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
  json $1 400 qwen3-30b-a3b:Q4_K_M ""; json $1 400 qwen3.5-9b:Q4_K_M ""; }
# begin NAME: the script's console into $OUT/console-NAME.txt as it runs, the packed programs unpacked, the card named
begin() { exec > >(tee "$OUT/console-$1.txt") 2>&1; bins
  # which card: rows compare only within a call, and the acceptance rows are the H200's (an H100 may come instead)
  local card; card=$(nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 |
    head -2); echo "$card"
  # CARD names the JSON files (round 73: an H100's were named -h200 until then; their "gpu" field was right)
  CARD=$(echo "$card" | head -1 | grep -oiE 'h100|h200' | tr A-Z a-z); CARD=${CARD:-gpu}; }
# ab_switch N BUILD SHAPE TAG "BENCH ARGS" OFF [ENV=VALUE...]: N rounds of build-BUILD's tg128 row of SHAPE with the
# A side's OFF (e.g. BW24_KV_AHEAD=0, labelled off-TAG) and without it (on-TAG), alternated, both with the ENV=VALUEs
ab_switch() { local n=$1 b=$2 m=$3 t=$4 a=$5 off=$6 i; shift 6
  for i in $(seq "$n"); do row off-$t $b $m tg128 "$a" "$off" "$@"; row on-$t $b $m tg128 "$a" "$@"; done; }
# ab "BENCH ARGS" SHAPE...: the tg128 rows of base and new, alternated twice, each shape in turn
ab() { local a=$1 i b m; shift; for i in 1 2; do for b in base new; do for m in "$@"; do row $b $b $m tg128 "$a"; done; done; done; }
# ab_depth: base against new where attention at depth shows: Qwen3-8B Q4_K_M at depth 4096 (f16 KV, two rounds; q8_0
# KV), at depth 0, and Qwen3-30B-A3B at depth 4096 (tg128)
ab_depth() { local i b
  for i in 1 2; do for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done; done
  for b in base new; do
    row $b-q8 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0"
    row $b-d0 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
  done
  for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done; }
# verify_attention SHA: the attention kernel-check families into one file, its head-group rows counted, the GPU tests
verify_attention() { kc_one $1 attention attention_rope attention_bound; check_rows $1 attention 'head groups'; gpu_tests $1; }
# gpu_tests SHA: build-new's [gpu] model tests and GPU-vs-CPU tests, both into $OUT/gpu-tests-SHA.txt (one file of the
# few a call brings back), their summary lines
gpu_tests() { local f="$OUT/gpu-tests-$1.txt" g="/tmp/gpu-vs-cpu-$1.txt"
  timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$f" 2>&1
  echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$f" | head -3
  timeout 120 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$g" 2>&1
  echo "GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" "$g" | head -5; cat "$g" >> "$f"; }
# ncu_path: Nsight Compute's command line, on PATH, in the toolkit or in its own install (empty where none)
ncu_path() { command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1; }
# breakdown NAME SHA BENCH_COMMAND...: per-kernel GPU time of one bench run (nsys where present, else ncu's
# gpu__time_duration, kernels serialized) into $OUT/kernels-NAME-SHA.csv, and its top 16 kernels by total time.
# NCU_RANGE (e.g. "--launch-skip 3000 --launch-count 600"): ncu times only those launches (a 30B run timed whole did
# not finish in 150 s, round 11).
breakdown() { local m=$1 sha=$2; shift 2
  local nsys ncu; nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
  ncu=$(ncu_path)
  if [ -n "$nsys" ]; then
    timeout 150 $nsys profile -t cuda -o /tmp/p-$m --force-overwrite true "$@" > /tmp/nsys-$m.log 2>&1
    timeout 60 $nsys stats -r cuda_gpu_trace --format csv -o /tmp/t-$m /tmp/p-$m.nsys-rep > /dev/null 2>&1
    python3 - "$(ls /tmp/t-$m*.csv | head -1)" /tmp/k-$m.csv <<'PY'
import csv, sys
w = csv.writer(open(sys.argv[2], 'w'))
for x in csv.DictReader(open(sys.argv[1])):
    n = x.get('Name') or ''
    if n and x.get('Duration (ns)') and 'memcpy' not in n.lower() and 'memset' not in n.lower(): w.writerow([n, x['Duration (ns)']])
PY
  else
    timeout 200 $ncu --clock-control none --metrics gpu__time_duration.sum --csv $NCU_RANGE "$@" > /tmp/ncu-$m.csv 2>/dev/null
    python3 - /tmp/ncu-$m.csv /tmp/k-$m.csv <<'PY'
import csv, sys
w = csv.writer(open(sys.argv[2], 'w'))
for x in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if x.get('Metric Name') == 'gpu__time_duration.sum':
        w.writerow([x['Kernel Name'], float(x['Metric Value'].replace(',', '')) * (1000 if x['Metric Unit'] == 'usecond' else 1)])
PY
  fi
  cp /tmp/k-$m.csv "$OUT/kernels-$m-$sha.csv"; echo "$m t=$(el)"
  python3 - /tmp/k-$m.csv <<'PY'
import csv, sys, collections
tot = collections.Counter(); cnt = collections.Counter()
for row in csv.reader(open(sys.argv[1])):
    if len(row) < 2: continue
    try: t = float(row[1])
    except ValueError: continue
    name = row[0].split('(')[0].split('<')[0][-60:]
    tot[name] += t; cnt[name] += 1
allt = sum(tot.values()) or 1
print(f"  total {allt/1e6:.2f} ms over {sum(cnt.values())} launches")
for n, t in tot.most_common(16): print(f"  {t/1e6:8.3f} ms {100*t/allt:5.1f} % {cnt[n]:6d}x {n}")
PY
}
# bins: binaries built on the 2-core machine (tools/wip/pack-bins.sh) and carried as .carry/bins/BUILD.tar.xz (or, the
# older form, BUILD--PATH.xz with '+' for '/'), unpacked to build-BUILD/PATH: a cold device build of one tree takes
# minutes of the call, two at once did not finish in 560 s (round 12). The tests' compiled-in data path (/work/main/tests/data) is pointed at this tree.
bins() { python3 - <<'PY'
import glob, lzma, os
for s in sorted(glob.glob('.carry/bins/*--*.xz')):
    b, n = os.path.basename(s)[:-3].split('--')
    d = f'build-{b}/' + n.replace('+', '/'); os.makedirs(os.path.dirname(d), exist_ok=True)
    open(d, 'wb').write(lzma.open(s).read()); os.chmod(d, 0o755)
import tarfile  # pack-bins' solid form: .carry/bins/BUILD.tar.xz holds BUILD's paths (round 58)
for s in sorted(glob.glob('.carry/bins/*.tar.xz')):
    with tarfile.open(s, 'r:xz') as t:  # the 'data' filter where this Python has it (3.12+ warns without one)
        t.extractall('build-' + os.path.basename(s)[:-7], **({'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}))
PY
  [ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
  # the tests' libbw24.so.0, and pack-bins' copies of the libraries the device lacks (carry .carry without .deps)
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/build-new:$PWD/.carry/rtlib; echo "unpacked t=$(el)"; }
# trace_row TAG SHAPE "BENCH ARGS" [ENV=VALUE...]: a tg128 row of SHAPE traced (tools/trace from .carry/trace:
# libbw24-kernel-trace.so, libcupti.so.13, step_profile.py) and the profile of its last 100 steps into
# $OUT/profile-TAG.md, its first TRACE_LINES lines (14) and TRACE_POS first-layer rows (10) printed. TRACE_BUILD
# (new) is the build, TRACE_LAYER_ROWS (24) the profile's per-position rows.
trace_row() { local tag=$1 m=$2 a=$3 pos=${TRACE_POS:-10}; shift 3
  LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace row "traced $tag" ${TRACE_BUILD:-new} $m tg128 "$a" "$@" \
    CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows ${TRACE_LAYER_ROWS:-24} \
    > $OUT/profile-$tag.md 2>&1
  head -${TRACE_LINES:-14} $OUT/profile-$tag.md
  if [ $pos -gt 0 ]; then sed -n '/| pos |/,$p' $OUT/profile-$tag.md | sed -n "3,$((2 + pos))p"; fi; }
# trace_profile BUILD SHAPE [LINES]: a plain tg128 row of build-BUILD, then the same run traced (trace_row, 48
# per-position rows), its profile's first LINES lines printed (default 28)
trace_profile() { local b=$1 m=$2
  row plain $b $m tg128 "-p 16 -n 128 -r 1"
  TRACE_BUILD=$b TRACE_LAYER_ROWS=48 TRACE_LINES=${3:-28} TRACE_POS=0 trace_row ${m/:/-} $m "-p 16 -n 128 -r 1"; }
# ncu_stalls CSV LIMIT NCU_ARGS... COMMAND...: DRAM throughput, issue activity and stall reasons (ncu, clocks unlocked)
# of the launches NCU_ARGS select in COMMAND, into CSV within LIMIT seconds, then a line a launch
ncu_stalls() { local f=$1 lim=$2 ncu r; shift 2
  ncu=$(ncu_path)
  if [ -z "$ncu" ] || [ "$lim" -lt 30 ]; then echo "ncu: none found, or $lim s left"; return 0; fi
  local m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
  m=$m,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
  for r in long_scoreboard barrier wait short_scoreboard mio_throttle no_instruction math_pipe_throttle lg_throttle \
    membar sleeping; do m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
  timeout $lim $ncu --clock-control none --metrics $m --csv "$@" > "$f" 2> /tmp/ncu.err
  echo "ncu rc=$? t=$(el)"; tail -3 /tmp/ncu.err
  [ -s "$f" ] && python3 - "$f" <<'PY'
import csv, sys, collections, re
rows = collections.OrderedDict()
for x in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')):
    k = (x['ID'], re.sub(r'\(anonymous namespace\)::|bw24::cuda::|gemv_detail::|gemv_stream_kernel', '', x['Kernel Name'])[:60])
    n = x['Metric Name'].replace('smsp__average_warps_issue_stalled_', 'st_').replace('_per_issue_active.ratio', '')
    rows.setdefault(k, {})[n.split('.')[0][:24]] = x['Metric Value']
for (i, n), m in rows.items():
    print(i, n, ' '.join(f"{k}={v}" for k, v in m.items()))
PY
}
