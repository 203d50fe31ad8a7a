#!/bin/bash
# Round 6, call 4 (tree 470c084, wip/routed-staged: the routed Q4_K gate-up through shared memory), with
# the 64 s of device time left then:  bash tools/wip/next10.sh 470c084
MAIN35=0 JSON_SHAPES=qwen3-30b-a3b:Q4_K_M LIMIT=325 JSON_UNTIL=250 NCU_UNTIL=285 NCU_COUNT=2 exec bash tools/wip/routed-ab.sh "$@"
