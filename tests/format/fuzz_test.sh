#!/bin/sh
# fuzz_test.sh SECONDS BUILD_DIR FALLBACK_DRIVER — the `format.fuzz` test:
# libFuzzer for SECONDS when clang can build a fuzzer here, otherwise the
# fallback driver over the seeds plus thousands of mutated inputs.  It
# never silently does nothing: each path prints what it ran.
set -eu
secs=$1 build=$2 driver=$3
here=$(cd "$(dirname "$0")" && pwd)
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if command -v clang >/dev/null 2>&1 && clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
  echo "format.fuzz: libFuzzer for $secs s (build in $build)"
  "$here/run_fuzz.sh" "$secs" "$build"
else
  echo "format.fuzz: libFuzzer is not available (install clang and libclang-rt-dev); running the fallback driver"
  "$driver" --iterations 20000
fi
