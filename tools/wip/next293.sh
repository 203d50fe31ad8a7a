#!/bin/bash
# next293 (round 53): the rest of main's checks with merge-once landed (5c1fddc; next292 ran the attention families,
# the model tests and the JSONs): GPU vs CPU and every kernel check family in one run, next289's script.
# Pack (on main at 5c1fddc's device code, clean tree): tools/wip/pack-bins.sh new HEAD bw24-kernel-check
#   tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
exec bash tools/wip/next289.sh "$@"
