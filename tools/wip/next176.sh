#!/bin/bash
# next176 (carry .carry only): bash tools/wip/next176.sh SHA  (timeout ~200, the session's last device seconds) -- the
# landed tip 57a6cde (every streamed format a kernel instance per cut; SASS of its 72 streamed instances identical to
# next175's measured build 48f4707): GPU tests, then acceptance JSON rows as long as time lasts.
# pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
json $SHA 60 qwen3-8b:Q4_K_M ""
json $SHA 90 qwen3.5-9b:Q4_K_M ""
json $SHA 120 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
