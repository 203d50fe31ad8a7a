# Sourced by tools/device-cache.sh and tools/device-check.sh: the compiler cache settings shared by
# the development machine (which fills .ccache-h200) and the H200 runs (which read it).
export CCACHE_DIR=$PWD/.ccache-h200 CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
export CCACHE_COMPRESS=1 CCACHE_COMPRESSLEVEL=19 CCACHE_MAXSIZE=60M CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros
export PATH=$PWD/.deps/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
