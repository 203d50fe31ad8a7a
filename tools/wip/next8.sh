#!/bin/bash
# Round 6, call 2 (tree e915ccb: down four rows a warp and gate-up two):  bash tools/wip/next8.sh e915ccb
exec bash tools/wip/routed-ab.sh "$@"
