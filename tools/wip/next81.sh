#!/bin/bash
# next81 (carry .carry only):  bash tools/wip/next81.sh SHA  (timeout_s 70)
# main SHA (ffff370's f16 kernels, bd9b9e3's q8_0 four-head instance): the model [gpu] tests (next79's ran with a
# fixture path the device lacks) and GPU vs CPU, then the attention kernel check while time lasts.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
kc_one $SHA attention attention_rope
echo "end t=$(el)"
