#!/bin/bash
# Round 6, call 3 (tree a69e80c: down four rows a warp only; wip/routed-lb at 5 CTAs a SM beside it):
#   bash tools/wip/next9.sh a69e80c
LB5=1 NCU_COUNT=2 exec bash tools/wip/routed-ab.sh "$@"
