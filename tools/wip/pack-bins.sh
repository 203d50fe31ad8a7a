#!/bin/bash
# pack-bins.sh NAME REF [TARGETS...]: build commit REF here (build-pack/SHA, ccache, sm_90) and put each TARGET (a path
# in the build directory; default bw24-bench) into .carry/bins/NAME--TARGET.xz ('/' as '+') for lib.sh's bins on the
# device (~5 MB each). Run from the repository root, /work/main. The test programs compile in their source path: build
# them from the working tree (REF = HEAD, no local changes), where that path is /work/main, as bins links it there.
set -euo pipefail
name=$1 ref=$2; shift 2
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(bw24-bench)
sha=$(git rev-parse --short "$ref")
if [ "$(git rev-parse HEAD)" = "$(git rev-parse "$ref")" ] && git diff --quiet HEAD; then src=$PWD; else
  src=/tmp/pack-src-$sha; rm -rf "$src"; mkdir -p "$src"; git archive "$ref" | tar -x -C "$src"; fi
# Test programs built from the archive look for their fixtures under /tmp/pack-src-SHA, which the
# device lacks (next79's model tests failed so: the tree had staged result files).
for t in "${targets[@]}"; do [[ $t == tests/* && $src != "$PWD" ]] &&
  { echo "pack-bins: $t needs REF = HEAD and a clean tree (git status)" >&2; exit 1; }; done
cmake -S "$src" -B build-pack/$sha -G Ninja -DCMAKE_BUILD_TYPE=Release -DBW24_CUDA=AUTO -DBW24_CUDA_ARCHS=90 \
  -DBW24_GIT_SHA=$sha > /dev/null
names=(); for t in "${targets[@]}"; do names+=("$(basename "$t")"); done
ninja -C build-pack/$sha "${names[@]}" > /tmp/pack-$sha.log 2>&1 || { tail -30 /tmp/pack-$sha.log; exit 1; }
mkdir -p .carry/bins
# Stripped before xz (a copy: the build keeps its symbols), -9e: ~2-3 % smaller than -6 unstripped, which the carry's
# 64 MiB needs (the tree counts at its disk blocks, ~33.7 MB in round 50).
pack() { local src=$1 dst=$2 tmp; tmp=$(mktemp); cp "$src" "$tmp"; strip --strip-unneeded "$tmp"
  xz -T2 -9e -c "$tmp" > "$dst"; rm -f "$tmp"; ls -la "$dst"; }
for t in "${targets[@]}"; do pack "build-pack/$sha/$t" ".carry/bins/$name--${t//\//+}.xz"; done
# The test programs load libbw24.so.0 (lib.sh's bins puts build-NAME on LD_LIBRARY_PATH): packed with them, since
# next140's model tests could not start without it.
for t in "${targets[@]}"; do if [[ $t == tests/* ]]; then
  ninja -C build-pack/$sha libbw24.so >> /tmp/pack-$sha.log 2>&1
  pack "build-pack/$sha/libbw24.so.0" ".carry/bins/$name--libbw24.so.0.xz"
  break; fi; done
# The shared libraries they load that the device lacks, into .carry/rtlib (~5 MB), so a script running only packed
# programs can carry .carry alone, without .deps' 23 MB: every library outside the C/C++ runtime, from where ldd finds
# it with .deps first (abseil, fmt, pcre2 from .deps; utf8proc, which .deps does not stage, from this machine: round
# 46's next261 could not start the bench without it).
mkdir -p .carry/rtlib
for t in "${targets[@]}"; do LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu ldd "build-pack/$sha/$t" |
  awk '/=> \// {print $1, $3}' | while read -r lib path; do
    # libbw24 itself is packed above (30 MB unpacked: round 50 found it copied here too)
    [[ $lib =~ ^(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|ld-linux|libbw24)[.-] ]] || cp -L "$path" .carry/rtlib/
  done; done
du -sh .carry/rtlib
