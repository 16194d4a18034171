#!/usr/bin/env bash
# exports_test.sh LIBEPHEMERA_SO [LUA_MODULE_SO [INSTALLED_ARCHIVE]]: the shared library exports
# only the API (eph_*) and has a SONAME; the Lua module exports only
# luaopen_* (everything else is built hidden: EPH_API in ephemera/base.h).
set -euo pipefail
lib=$1 module=${2:-} archive=${3:-}
status=0
# (an ASan build adds __odr_asan.NAME beside each exported variable NAME)
exported() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/^__odr_asan\.//'; }
n=$(exported "$lib" | grep -c '^eph_' || true)
if extra=$(exported "$lib" | grep -v '^eph_'); then
  echo "FAIL: $lib exports symbols outside the API:"; echo "$extra" | head
  status=1
fi
if [[ $n -lt 50 ]]; then echo "FAIL: $lib exports only $n eph_* symbols (the API is larger)"; status=1; fi
if ! objdump -p "$lib" | grep -qE 'SONAME +libephemera\.so\.[0-9]+'; then
  echo "FAIL: $lib has no SONAME libephemera.so.N"; status=1
fi
if [[ -n $module ]]; then
  if extra=$(exported "$module" | grep -v '^luaopen_'); then
    echo "FAIL: $module exports more than luaopen_*:"; echo "$extra" | head
    status=1
  fi
  exported "$module" | grep -qx luaopen_ephemera || { echo "FAIL: $module does not export luaopen_ephemera"; status=1; }
fi
if [[ -n $archive ]]; then # the installed libephemera.a: internals made local
  if extra=$(nm -g --defined-only "$archive" | awk 'NF == 3 {print $3}' | sed 's/^__odr_asan\.//' | grep -v '^eph_'); then
    echo "FAIL: the installed $archive has global symbols outside the API:"; echo "$extra" | head
    status=1
  fi
  na=$(nm -g --defined-only "$archive" | awk 'NF == 3 {print $3}' | grep -c '^eph_' || true)
  if [[ $na -lt 50 ]]; then echo "FAIL: $archive defines only $na eph_* symbols"; status=1; fi
fi
[[ $status == 0 ]] && echo "ok: $(basename "$lib") exports $n eph_* symbols and nothing else${module:+; the Lua module only luaopen_ephemera}"
exit $status
