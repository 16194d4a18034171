#!/bin/sh
# needs.sh BYTES -- a program whose heap need is known exactly: it completes
# iff EPHEMERA_GC sets no max= or one of at least BYTES (the minheap test).
max=$(printf '%s\n' "${EPHEMERA_GC:-}" | sed -n 's/.*max=\([0-9]*\).*/\1/p')
if [ -n "$max" ] && [ "$max" -lt "$1" ]; then
  echo "heap exhausted: max=$max is below $1" >&2
  exit 1
fi
exit 0
