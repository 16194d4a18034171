#!/bin/sh
# run_fuzz.sh SECONDS [BUILD_DIR] — builds the .eph reader fuzz target with
# clang and libFuzzer (+ AddressSanitizer and UBSan) in its own build
# directory (default: build-fmt-fuzz in the source tree) and fuzzes
# eph_file_load_buffer for SECONDS, starting from a generated seed
# corpus.  Needs clang and libFuzzer (Debian: clang and libclang-rt-dev,
# i.e. libclang-rt-14-dev on bookworm).  Findings: crash-* files in the
# build directory; the exit status is non-zero.
set -eu
secs=${1:?usage: run_fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$src/build-fmt-fuzz}
cc=${CC_FUZZ:-clang}
mkdir -p "$build"

cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEPH_BUILD_BENCH=OFF -DEPH_WERROR=OFF -DEPH_SANITIZE=ON -DEPH_FORMAT_LIBFUZZER=ON \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" >"$build/fuzz-configure.log" 2>&1 \
  || { cat "$build/fuzz-configure.log" >&2; exit 1; }
cmake --build "$build" --target eph-format-fuzz-reader eph-format-fuzz-gen -j"${JOBS:-2}" >"$build/fuzz-build.log" 2>&1 \
  || { tail -50 "$build/fuzz-build.log" >&2; exit 1; }

seeds=$build/fuzz-seeds corpus=$build/fuzz-corpus
rm -rf "$seeds" && mkdir -p "$seeds" "$corpus"
"$build/tests/format/eph-format-fuzz-gen" seeds "$seeds"
cd "$build"
# -max_len: enough for small multi-chunk files; -rss_limit_mb: a bound on
# what any input may make the reader allocate.
exec "$build/tests/format/eph-format-fuzz-reader" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
  -max_len=16384 -print_final_stats=1 "$corpus" "$seeds"
