#!/usr/bin/env bash
# tests/lua/testes_test.sh FILE — one file of Lua 5.4.4's own test suite
# (tests/lua/testes-5.4.4, portable mode as its all.lua documents) under
# plain lua5.4 and under each route of the adapter: `ephemera lua` with
# every object, with 1/100 sampling, and `lua5.4 -l ephemera`.  Each route
# must pass exactly when plain lua5.4 passes, and each profile must
# `ephemera dump` and `ephemera report`.  FILE "all" runs all.lua whole
# under full tracking and checks the profile's GC cycle count against a Lua
# __gc tracer (allrun.lua).  Environment: EPH, LUA54, MODULE_DIR, TESTES,
# SCRIPTS, CHECK, SANITIZE (tests/lua/CMakeLists.txt).
set -uo pipefail
file=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cp -r "$TESTES"/. "$tmp"/ && chmod -R u+w "$tmp" && cd "$tmp" || exit 1

# a profile reads: dump and report both succeed
reads() {
  if "$EPH" dump "$1" >/dev/null 2>"$tmp/dump.err" && "$EPH" report "$1" >/dev/null 2>"$tmp/report.err"; then
    ok "$2: profile dumps and reports"
  else fail "$2: profile does not read"; cat "$tmp/dump.err" "$tmp/report.err"; fi
}

if [[ $file == all ]]; then
  cp "$SCRIPTS/allrun.lua" .
  "$EPH" lua -o all.eph allrun.lua >out 2>err
  rc=$?
  if ((rc == 0)) && grep -q '^final OK !!!$' out; then ok "all.lua under full tracking: final OK"
  else fail "all.lua under full tracking (status $rc)"; tail -5 out err; fi
  reads all.eph "all.lua"
  tracer=$(sed -n 's/^tracer cycles: \([0-9]*\)$/\1/p' out)
  cycles=$("$CHECK" all.eph | sed -n 's/^total .*cycles=\([0-9]*\).*/\1/p')
  # the profile also counts the collections made before the script (and its tracer) start:
  # lua.c's switch to generational mode and a minor collection while the script is loaded,
  # counted here on an empty script; then cycles = tracer + those, within one cycle
  echo 'local x = 1' >empty.lua
  "$EPH" lua -o empty.eph empty.lua || fail "empty script"
  before=$("$CHECK" empty.eph | sed -n 's/^total .*cycles=\([0-9]*\).*/\1/p')
  if [[ -n $tracer && -n $cycles && -n $before ]] && ((tracer > 1000 && cycles - tracer - before >= -1 &&
    cycles - tracer - before <= 1)); then
    ok "GC cycles: profile $cycles, Lua tracer $tracer + $before before the script"
  else fail "GC cycles: profile '$cycles', Lua tracer '$tracer' + '$before' before the script"; fi
  ((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
  exit 0
fi

export LUA_INIT_5_4='_port=true; function Message(m) print(m) end'
script=$file
if [[ $file == big.lua ]]; then # big.lua runs inside a coroutine (as all.lua runs it)
  printf 'local f = coroutine.wrap(assert(loadfile("big.lua")))\nassert(f() == "b")\nassert(f() == "a")\n' >bigrun.lua
  script=bigrun.lua
fi
"$LUA54" "$script" >plain.out 2>&1
want=$?
echo "plain lua5.4 $file: status $want"
# same_outcome NAME STATUS: passes exactly when plain lua5.4 passes
same_outcome() {
  if (((want == 0) == ($2 == 0))); then ok "$1: status $2, as lua5.4 ($want)"
  else fail "$1: status $2, lua5.4 $want"; tail -5 "$3"; fi
}
"$EPH" lua -o full.eph "$script" >full.out 2>&1
same_outcome "$file, every object" $? full.out
reads full.eph "$file, every object"
"$EPH" lua --profile sample=1/100 -o s.eph "$script" >s.out 2>&1
same_outcome "$file, 1/100" $? s.out
reads s.eph "$file, 1/100"
if [[ $SANITIZE == 1 ]]; then ok "lua5.4 -l ephemera: skipped in the sanitizer build"; else
  LUA_CPATH="$MODULE_DIR/?.so;;" EPHEMERA_PROFILE="out=$tmp/m.eph" "$LUA54" -l ephemera "$script" >m.out 2>&1
  same_outcome "$file, lua5.4 -l ephemera" $? m.out
  reads m.eph "$file, lua5.4 -l ephemera"
fi
((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
