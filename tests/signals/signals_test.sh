#!/usr/bin/env bash
# signals_test.sh run|lua EPHEMERA WORKDIR [LUA54 MODULE_DIR SANITIZED]:
# SIGINT and SIGTERM in the middle of a profiled `ephemera run` or
# `ephemera lua` finish the profile (a complete file, with the objects
# still alive censored) and then end the process by the signal (exit
# status 130 or 143, as `perf record`); a signal the process ignores stays
# ignored; a second signal ends a process that never reaches a safe point
# (blocked in read) at once, its file readable up to its last chunk.
set -uo pipefail
what=$1 bin=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# start FILE CMD...: runs CMD in the background (stdin from $STDIN, default
# /dev/null) with SIGINT and SIGTERM at their default action (a
# non-interactive shell starts background jobs with SIGINT ignored), and
# waits until FILE holds at least MIN bytes (a few chunks: the run is under
# way).  Sets pid.
MIN=65536
start() {
  local file=$1
  shift
  rm -f "$file"
  env --default-signal=INT,TERM "$@" <"${STDIN:-/dev/null}" >"$dir/out" 2>"$dir/err" &
  pid=$!
  for ((i = 0; i < 1200; i++)); do
    [[ -f $file && $(stat -c %s "$file") -ge $MIN ]] && return 0
    kill -0 "$pid" 2>/dev/null || { fail "$* ended before it was signalled"; sed 's/^/    /' "$dir/err" | head -5; return 1; }
    sleep 0.05
  done
  fail "$file did not reach $MIN bytes in 60 s"
  return 1
}

# finish: waits (at most 180 s) for pid to end; sets rc.
finish() {
  for ((i = 0; i < 3600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "still running 180 s after the signal"
    kill -KILL "$pid"
  fi
  wait "$pid"
  rc=$?
}

# check_complete NAME FILE: ephemera dump reads FILE as complete, with censored records.
check_complete() {
  local name=$1 file=$2
  "$bin" dump "$file" >"$dir/dump" 2>&1 || { fail "$name: dump failed"; head -3 "$dir/dump"; return; }
  local censored
  censored=$(sed -n 's/^  censored *\([0-9]*\)$/\1/p' "$dir/dump")
  if grep -q "^$file: .eph version [0-9]*, complete," "$dir/dump" && [[ ${censored:-0} -gt 0 ]]; then
    ok "$name: complete file, $(grep -m1 '^records' "$dir/dump"), $censored censored"
  else
    fail "$name: not a complete profile with censored records"
    sed -n '1p;/^records/,/^gcs/p' "$dir/dump" | sed 's/^/    /'
  fi
}

# interrupt NAME SIGNAL FILE CMD...: the run is signalled mid-way, exits 128 + N, its file complete.
interrupt() {
  local name=$1 sig=$2 file=$3
  shift 3
  start "$file" "$@" || return
  kill -"$sig" "$pid"
  finish
  local want=$((128 + $(kill -l "$sig")))
  if [[ $rc -eq $want ]]; then ok "$name: SIG$sig: exit status $rc"; else
    fail "$name: SIG$sig: exit status $rc, expected $want"
    sed 's/^/    /' "$dir/err" | head -5
  fi
  grep -q "self-check" "$dir/out" && fail "$name: the run finished before the signal (make it longer)"
  grep -Eq "AddressSanitizer|runtime error" "$dir/err" && { fail "$name: sanitizer report"; grep -E "ERROR|runtime error" "$dir/err" | head -3; }
  grep -q "SIG$sig: .*profile .* finished" "$dir/err" || fail "$name: no 'profile finished' message on stderr"
  check_complete "$name" "$file"
}

case $what in
run)
  f=$dir/run.eph
  # dataframe at its large size runs for tens of seconds: long enough to be interrupted
  interrupt "gc mode, every object" INT "$f" "$bin" run dataframe --size large --profile mode=gc -o "$f"
  interrupt "gc mode, threads=1, 1/10" TERM "$f" "$bin" run dataframe --size large --profile mode=gc,threads=1,sample=1/10 -o "$f"
  interrupt "finalization mode, 1/10" INT "$f" "$bin" run dataframe --size large --profile mode=finalization,sample=1/10 -o "$f"
  interrupt "merlin mode" TERM "$f" "$bin" run dataframe --size large --profile mode=merlin -o "$f"
  # SIGINT ignored (nohup, a background job): it stays ignored; SIGTERM still finishes the profile
  if start "$f" env --ignore-signal=INT "$bin" run dataframe --size large --profile mode=gc -o "$f"; then
    kill -INT "$pid"
    sleep 1
    if kill -0 "$pid" 2>/dev/null; then ok "ignored SIGINT: still running"; else fail "ignored SIGINT ended the run"; fi
    kill -TERM "$pid"
    finish
    [[ $rc -eq 143 ]] && ok "ignored SIGINT, then SIGTERM: exit status 143" || fail "ignored SIGINT, then SIGTERM: exit status $rc"
    check_complete "ignored SIGINT, then SIGTERM" "$f"
  fi
  ;;
lua)
  lua54=${4:-} module_dir=${5:-} sanitized=${6:-0}
  f=$dir/lua.eph
  interrupt "lua, every object" INT "$f" "$bin" lua -o "$f" "$here/forever.lua"
  interrupt "lua, 1/1000" TERM "$f" "$bin" lua --profile sample=1/1000 -o "$f" "$here/forever.lua"
  # no sampled allocation at all (the script makes no threads): the GC-cycle sentinel is the safe point
  MIN=0
  if start "$f" "$bin" lua --profile classes=thread -o "$f" "$here/forever.lua"; then
    sleep 0.5
    kill -INT "$pid"
    finish
    [[ $rc -eq 130 ]] && ok "lua, no sample (sentinel): exit status 130" || fail "lua, no sample (sentinel): exit status $rc"
    "$bin" dump "$f" 2>&1 | grep -q ", complete," && ok "lua, no sample: complete file" || fail "lua, no sample: incomplete file"
  fi
  # blocked in read(): the first signal waits for a safe point that never comes, the second ends it
  rm -f "$dir/fifo"
  mkfifo "$dir/fifo"
  sleep 300 >"$dir/fifo" &
  writer=$!
  if STDIN=$dir/fifo start "$f" "$bin" lua -o "$f" "$here/blocked.lua"; then
    for ((i = 0; i < 600; i++)); do grep -q blocked "$dir/out" && break; sleep 0.05; done
    kill -TERM "$pid"
    sleep 1
    if kill -0 "$pid" 2>/dev/null; then ok "blocked: still waiting after one SIGTERM"; else fail "blocked: ended by one SIGTERM"; fi
    kill -TERM "$pid"
    finish
    [[ $rc -eq 143 ]] && ok "blocked, second SIGTERM: exit status 143" || fail "blocked, second SIGTERM: exit status $rc"
    "$bin" dump "$f" >"$dir/dump" 2>&1 && grep -q "INCOMPLETE" "$dir/dump" &&
      ok "blocked, second SIGTERM: the file reads up to its last chunk" || { fail "blocked: file unreadable"; head -3 "$dir/dump"; }
  fi
  kill "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null
  MIN=65536
  # the module in lua5.4: SIGTERM (left at its default by lua.c) finishes the profile; SIGINT is
  # lua.c's own ("interrupted!", then lua_close, which also finishes it)
  if [[ -z $lua54 || $sanitized == 1 ]]; then ok "lua5.4 -l ephemera: skipped (no lua5.4, or a sanitizer build)"; else
    interrupt "lua5.4 -l ephemera" TERM "$f" env LUA_CPATH="$module_dir/?.so;;" EPHEMERA_PROFILE="out=$f" \
      "$lua54" -l ephemera "$here/forever.lua"
    if start "$f" env LUA_CPATH="$module_dir/?.so;;" EPHEMERA_PROFILE="out=$f" "$lua54" -l ephemera "$here/forever.lua"; then
      kill -INT "$pid"
      finish
      [[ $rc -eq 1 ]] && grep -q "interrupted!" "$dir/err" && ok "lua5.4 -l ephemera: SIGINT is lua.c's (exit status 1)" ||
        fail "lua5.4 -l ephemera: SIGINT: exit status $rc"
      check_complete "lua5.4 -l ephemera, SIGINT" "$f"
    fi
  fi
  ;;
*) echo "usage: $0 run|lua EPHEMERA WORKDIR [LUA54 MODULE_DIR SANITIZED]" >&2; exit 2 ;;
esac
[[ $fails -eq 0 ]] && echo "all ok"
exit $((fails > 0))
