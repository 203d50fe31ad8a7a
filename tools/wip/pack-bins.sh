#!/bin/bash
# pack-bins.sh NAME REF [TARGETS...]: build commit REF here (build-pack/SHA, ccache, sm_90) and put each TARGET (a path
# in the build directory; default bw24-bench) into .carry/bins/NAME.tar.xz (one solid archive) for lib.sh's bins on the
# device. Run from the repository root, /work/main. The test programs compile in their source path: build
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
# The targets, stripped (copies: the build keeps its symbols), as one solid tar in .carry/bins/NAME.tar.xz with a
# 256 MiB dictionary: each program holds the same ~25 MB of device code, which per-file xz (-9e, 64 MiB window)
# stored once a file (round 58: bench, kernel check, both test programs and libbw24.so.0 were 35.1 MB as five
# files, 9.7 MB as one), and the carry's 64 MiB counts the tree's ~36 MB too.
stage=$(mktemp -d)
for t in "${targets[@]}"; do mkdir -p "$stage/$(dirname "$t")"; cp "build-pack/$sha/$t" "$stage/$t"; done
# The test programs load libbw24.so.0 (lib.sh's bins puts build-NAME on LD_LIBRARY_PATH): packed with them, since
# next140's model tests could not start without it.
for t in "${targets[@]}"; do if [[ $t == tests/* ]]; then
  ninja -C build-pack/$sha libbw24.so >> /tmp/pack-$sha.log 2>&1
  cp "build-pack/$sha/libbw24.so.0" "$stage/"
  break; fi; done
find "$stage" -type f -exec strip --strip-unneeded {} +
rm -f .carry/bins/"$name"--*.xz
tar -C "$stage" -cf - . | xz -T1 --lzma2=preset=9e,dict=256MiB > ".carry/bins/$name.tar.xz"
rm -rf "$stage"; ls -la ".carry/bins/$name.tar.xz"
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
