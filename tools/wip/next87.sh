#!/bin/bash
# next87 (carry .carry only):  bash tools/wip/next87.sh  (timeout_s 360)
# base = main 6ab4586. ga = 502e3de: gemv_q8's 32-weight formats (Legacy: Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0) load a
# warp's first round of blocks (2 a lane, 1 for four pieces) into registers before the PDL wait, as flash decode's keys
# ahead (round 17: 2.8 us a layer, 3x its prediction); one-token store 47 -> 62 registers (5 -> 4 CTAs an SM).
# gb = 8fc42e4: the same, one-token single-row store / add launches held to 5 CTAs an SM (48 registers, 32 bytes of
# stack for Q8_0). Same arithmetic, same order (kernel check gemv_q8 families: bits against the CPU tolerance rows).
# Prediction: ~0.7 us a GEMV launch, 4 a layer: Qwen3-8B Q8_0 322.5 -> ~333 (+3 %), Qwen3.5-9B Q8_0 320.7 -> ~330;
# Q4_K_M rows unchanged (streamed formats); gb vs ga unknown sign.
source tools/wip/lib.sh
begin next87
for b in ga gb; do timeout 150 ./build-$b/bw24-kernel-check gemv_q8 > "$OUT/kc-gemv_q8-$b.txt" 2>&1
  echo "$b kernel-check gemv_q8 rc=$? $(tail -n 1 $OUT/kc-gemv_q8-$b.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-gemv_q8-$b.txt" | head -8
  timeout 60 ./build-$b/bw24-kernel-check moe > "$OUT/kc-moe-$b.txt" 2>&1
  echo "$b kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-$b.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-moe-$b.txt" | head -8
  cat "$OUT/kc-moe-$b.txt" >> "$OUT/kc-gemv_q8-$b.txt"; rm "$OUT/kc-moe-$b.txt"; done
A="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base ga gb; do row $b $b qwen3-8b:Q8_0 tg128 "$A"; done; done
for b in base ga gb; do row $b $b qwen3.5-9b:Q8_0 tg128 "$A"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0 -r 2 --device 0"
for b in ga gb base; do [ $(el) -lt 280 ] && timeout 50 ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q8_0 $J \
  --json "$OUT/$b-qwen3-8b-Q8_0-h200.json" | grep tg128 | sed "s/^/$b /"; done
echo "end t=$(el)"
