#!/bin/bash
# next35 (branch wip/fdec at ec449eb; carry .deps .carry with .carry/main-src refreshed from main):
#   bash tools/wip/next35.sh <sha>  (< 5 min)
# next34's measurement of ec449eb: no prefetch while a single split is visible (depth 0 read 393.7 -> 388.7 in
# next34). The same steps as next34.
exec bash tools/wip/next34.sh "$@"
