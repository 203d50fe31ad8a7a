#!/bin/bash
# Decode A/B in one build (through the device tool, after tools/device-check.sh has built
# build-h200): tg128 at depth 0 for one shape under each environment variant, in the order given,
# twice round (rows move by 1-2 % between runs of one binary; compare within a round).
#   bash tools/device-ab.sh SHAPE:QUANT "VAR=V ..." "VAR=V ..." ...      ("" = defaults)
#   e.g.  bash tools/device-ab.sh qwen3-8b:Q4_K_M "BW24_GEMV_STREAM=0" ""
m=${1:?SHAPE:QUANT}; shift
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
for round in 1 2; do
  for v in "$@"; do
    env $v ./build-h200/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r ${REPS:-1} --device 0 2>&1 |
      grep -E "tg128|rror" | sed "s/^/round $round [${v:-defaults}] /"
  done
done
