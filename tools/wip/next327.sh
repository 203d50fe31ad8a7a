#!/bin/bash
# next327 (round 59): why next326's landed form of the router room (wip/router-room) measured as main on Qwen3-30B-A3B
# (677.5 / 677.9 against 677.1 / 676.7) where next325's switch gained 1.15 %: branch wip/room-debug logs make_room's
# inputs and result (BW24_ROOM_LOG=1) and carries both forms in one binary (BW24_ROOM_MODE 0 none, 1 the room, 2
# next325's 76 KB switch), alternated. Pack: bash tools/wip/pack-bins.sh dbg HEAD bw24-bench (on wip/room-debug).
SHA=$1
source tools/wip/lib.sh
begin $SHA-room-debug
BW24_ROOM_LOG=1 timeout 90 ./build-dbg/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 16 -r 1 --device 0 2>&1 |
  grep -E "room|rror" | sort | uniq -c | head -20
for i in 1 2; do for m in 0 1 2; do row mode$m dbg qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROOM_MODE=$m; done; done
echo "end t=$(el)"
