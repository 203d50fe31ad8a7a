#!/usr/bin/env bash
# Debian packages bw24 builds and tests with (architecture.md §5). Idempotent; needs root.
set -euo pipefail
pkgs="cmake ninja-build g++ ccache clang libabsl-dev libfmt-dev catch2 libbenchmark-dev libpcre2-dev libutf8proc-dev
      nlohmann-json3-dev libcpp-httplib-dev libedit-dev binutils python3"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing
fi
