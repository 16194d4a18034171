#!/usr/bin/env bash
# tests/lua/adapter_test.sh TEST — the Lua adapter's tests (see CMakeLists.txt for
# the environment: EPH, CHECK, HOST, UNIT, WALL, MODULE_DIR, SCRIPTS, BENCH, LUA54, SRC).
set -uo pipefail
t=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect FILE PATTERN DESCRIPTION: a line of FILE matches the extended regex
expect() { if grep -Eq -- "$2" "$1"; then ok "$3"; else fail "$3 (no line matching '$2' in:)"; sed 's/^/    /' "$1"; fi; }

case $t in
alloc)
  # the allocator wrapper's counts call by call, refused calls included (alloc_check.c)
  "$UNIT" "$tmp" >"$tmp/out" 2>&1 || fail "alloc_check"
  cat "$tmp/out"
  ;;
known)
  # objects dying at known collectgarbage() calls, incremental and generational
  for gc in incremental generational; do
    "$EPH" lua --gc $gc -o "$tmp/k.eph" "$SCRIPTS/known.lua" >"$tmp/out" || fail "$gc: exit status"
    expect "$tmp/out" '^known done$' "$gc: script output"
    "$CHECK" "$tmp/k.eph" >"$tmp/c" || fail "$gc: profile unreadable"
    expect "$tmp/c" '^total complete=1 .*runtime=lua' "$gc: complete lua profile"
    expect "$tmp/c" '^group class=table line=5 freed=100 censored=0 weight=100 smin=2 smax=2$' \
      "$gc: 100 tables at line 5 survive exactly 2 cycles"
    expect "$tmp/c" '^group class=table line=6 freed=50 censored=0 weight=50 smin=0 smax=0$' \
      "$gc: 50 tables at line 6 die in the first cycle"
    expect "$tmp/c" '^group class=long_string line=12 freed=20 censored=20 weight=40 smin=0 smax=0$' \
      "$gc: line 12: 20 long strings freed (string.rep's), 20 censored at close (kept)"
    expect "$tmp/c" '^group class=short_string line=12 freed=20 censored=0 ' "$gc: line 12: 20 short strings (tostring of i)"
    expect "$tmp/c" '^group class=Lua_closure line=13 freed=30 censored=1 weight=31 smin=0 smax=0$' \
      "$gc: 30 Lua closures freed, mk itself censored"
    expect "$tmp/c" '^group class=upvalue line=13 freed=30 censored=0 ' "$gc: 30 upvalues"
    if grep -q bad-order "$tmp/c"; then fail "$gc: a record whose birth, alive-until and death are out of order"; fi
    # the site cache (on for full tracking, src/runtime/lua/site.c) gives the sites lua_getinfo gives:
    # prototypes not sampled switch it off (line 0: objects outside Lua code, such as the arg
    # strings, which differ between the two command lines)
    "$EPH" lua --gc $gc --profile 'classes=string,table,function,upvalue,userdata,thread' -o "$tmp/n.eph" \
      "$SCRIPTS/known.lua" >/dev/null || fail "$gc: run without prototypes"
    "$CHECK" "$tmp/n.eph" | grep '^group' | grep -v 'class=prototype\| line=0 ' >"$tmp/cn"
    grep '^group' "$tmp/c" | grep -v 'class=prototype\| line=0 ' >"$tmp/cf"
    if cmp -s "$tmp/cn" "$tmp/cf"; then ok "$gc: sites with and without the site cache agree"; else
      fail "$gc: sites differ with the site cache"; diff "$tmp/cn" "$tmp/cf" | head; fi
  done
  ;;
wall)
  # births' interpolated wall times lie between the deaths read just before
  # and after them on the byte clock (wall_check.c), for all but a few: an
  # interval in which the program did not allocate at an even rate (a
  # collector step, the machine's load) may put some a little outside
  "$EPH" lua --profile sample=1/10,seed=3 -o "$tmp/w.eph" "$SCRIPTS/ring.lua" 300000 >/dev/null || fail "ring.lua run"
  "$WALL" "$tmp/w.eph" >"$tmp/c" || fail "wall_check"
  cat "$tmp/c"
  if awk '/^wall /{split($2,b,"=");split($3,i,"="); exit !(b[2] > 10000 && i[2] >= 0.98 * b[2])}' "$tmp/c"; then
    ok "at least 98% of births inside the bracket of their neighbouring deaths"
  else fail "fewer than 98% of births inside the bracket of their neighbouring deaths"; fi
  ;;
sampling)
  "$EPH" lua --gc incremental --profile sample=every:10 -o "$tmp/s.eph" "$SCRIPTS/known.lua" >/dev/null || fail "every:10 run"
  "$CHECK" "$tmp/s.eph" >"$tmp/c"
  expect "$tmp/c" '^group class=table line=5 freed=10 censored=0 weight=100 ' "every:10: 10 records of weight 10 for 100 tables"
  "$EPH" lua --profile sample=1/20,seed=3 -o "$tmp/g.eph" "$SCRIPTS/many.lua" 40000 >/dev/null || fail "1/20 run"
  "$CHECK" "$tmp/g.eph" >"$tmp/c"
  w=$(awk '/^group class=table line=4 /{for(i=1;i<=NF;i++) if ($i ~ /^weight=/) {sub("weight=","",$i); print $i}}' "$tmp/c")
  if [[ -n $w ]] && awk -v w="$w" 'BEGIN{exit !(w > 36000 && w < 44000)}'; then ok "1/20 (geometric gaps) estimates 40000 tables ($w)";
  else fail "1/20 estimate of 40000 tables: '$w'"; cat "$tmp/c"; fi
  "$EPH" lua --profile sample=bytes:2K,seed=7 -o "$tmp/b.eph" "$SCRIPTS/many.lua" 40000 >/dev/null || fail "bytes run"
  "$CHECK" "$tmp/b.eph" >"$tmp/c"
  w=$(awk '/^group class=table line=4 /{for(i=1;i<=NF;i++) if ($i ~ /^weight=/) {sub("weight=","",$i); print $i}}' "$tmp/c")
  if [[ -n $w ]] && awk -v w="$w" 'BEGIN{exit !(w > 34000 && w < 46000)}'; then ok "bytes:2K estimates 40000 tables ($w)";
  else fail "bytes:2K estimate of 40000 tables: '$w'"; cat "$tmp/c"; fi
  "$EPH" lua --profile classes=table -o "$tmp/f.eph" "$SCRIPTS/known.lua" >/dev/null || fail "classes run"
  "$CHECK" "$tmp/f.eph" >"$tmp/c"
  if grep '^group' "$tmp/c" | grep -qv 'class=table '; then fail "classes=table kept other classes"; cat "$tmp/c"; else ok "classes=table"; fi
  "$EPH" lua --profile mode=finalization -o "$tmp/x.eph" "$SCRIPTS/known.lua" >/dev/null 2>"$tmp/err"
  [[ $? == 2 ]] && grep -q 'mode=finalization does not apply to Lua' "$tmp/err" && ok "mode=finalization rejected" ||
    { fail "mode=finalization not rejected clearly"; cat "$tmp/err"; }
  "$EPH" lua --profile sample=1/0 -o "$tmp/x.eph" "$SCRIPTS/known.lua" >/dev/null 2>"$tmp/err"
  [[ $? == 2 ]] && grep -q "sample" "$tmp/err" && ok "bad sample rejected" || fail "bad sample not rejected"
  ;;
errors)
  cd "$tmp"
  printf 'local function f(x) error("boom " .. x) end\nf(arg[1])\n' >err.lua
  printf 'x = = 1\n' >syn.lua
  printf 'error(setmetatable({}, {__tostring = function() return "custom" end}))\n' >obj.lua
  printf 'io.write("partial\\n") os.exit(3)\n' >exit.lua
  printf 'print(...) print(arg[0], #arg) return 1\n' >args.lua
  for s in "err.lua 7" "syn.lua" "obj.lua" "missing.lua" "exit.lua" "args.lua a b c"; do
    set -- $s
    "$LUA54" "$@" >lua.out 2>lua.err
    lrc=$?
    "$EPH" lua -o e.eph "$@" >eph.out 2>eph.err
    erc=$?
    sed -i '1s/^[^ ]*lua5\.4: //' lua.err
    sed -i '1s/^ephemera: //' eph.err
    if [[ $lrc == "$erc" ]] && cmp -s lua.out eph.out && cmp -s lua.err eph.err; then ok "$s: same output, stderr and status ($erc)"
    else fail "$s: differs (lua5.4 $lrc, ephemera $erc)"; diff lua.err eph.err; diff lua.out eph.out; fi
  done
  "$EPH" lua -o e.eph exit.lua >/dev/null
  "$CHECK" e.eph >c && grep -q '^total complete=1' c && ok "os.exit writes a complete profile" || fail "os.exit profile"
  ;;
debian)
  # Debian's Penlight and dkjson give the same output with and without the profiler
  "$LUA54" "$BENCH/gen-data.lua" csv 3000 "$tmp/d.csv"
  "$LUA54" "$BENCH/gen-data.lua" json 3000 "$tmp/d.json"
  for s in "csv-penlight.lua $tmp/d.csv" "json-dkjson.lua $tmp/d.json"; do
    set -- $s
    "$LUA54" "$BENCH/$1" "$2" >"$tmp/lua.out" 2>&1 || fail "$1 under lua5.4"
    for spec in sample=1/1 sample=1/100 sample=bytes:4K; do
      "$EPH" lua --profile $spec -o "$tmp/p.eph" "$BENCH/$1" "$2" >"$tmp/eph.out" 2>&1 || fail "$1 $spec: status"
      if cmp -s "$tmp/lua.out" "$tmp/eph.out"; then ok "$1 $spec: same output"; else fail "$1 $spec: output differs"; diff "$tmp/lua.out" "$tmp/eph.out" | head; fi
      "$CHECK" "$tmp/p.eph" >"$tmp/c" && grep -q '^total complete=1' "$tmp/c" && ok "$1 $spec: complete profile" || fail "$1 $spec: profile"
    done
  done
  "$EPH" lua -o "$tmp/c.eph" "$SCRIPTS/coro.lua" >"$tmp/out" || fail "coroutines: status"
  expect "$tmp/out" '^coro	55$' "coroutines and finalisers"
  ;;
module)
  # a host embedding Lua attaches the module to its running state and detaches
  "$HOST" "$MODULE_DIR/?.so" "$SCRIPTS/module_attach.lua" "$tmp/m.eph" >"$tmp/out" 2>&1 || { fail "host run"; cat "$tmp/out"; }
  expect "$tmp/out" '^attach ok' "attach / detach in a running state"
  "$CHECK" "$tmp/m.eph" >"$tmp/c" || fail "module profile unreadable"
  expect "$tmp/c" '^total complete=1' "module profile complete after stop()"
  expect "$tmp/c" '^group class=table line=7 freed=100 ' "module: 100 tables at line 7"
  # a host with its own allocator: the profiler's general path (not the direct calls it makes for
  # luaL_newstate's allocator); that allocator checks the size of every block it frees
  for sample in 1/1 1/7 bytes:512; do
    "$HOST" --own-alloc "$MODULE_DIR/?.so" "$SCRIPTS/module_attach.lua" "$tmp/o.eph" "$sample" >"$tmp/out" 2>&1 ||
      { fail "own allocator, sample=$sample: host run"; cat "$tmp/out"; }
    expect "$tmp/out" '^attach ok' "own allocator, sample=$sample: attach / detach"
    expect "$tmp/out" '^own allocator: 0 blocks live, 0 size mismatches$' "own allocator, sample=$sample: every block freed with its size"
    "$CHECK" "$tmp/o.eph" >"$tmp/c" || fail "own allocator, sample=$sample: profile unreadable"
    expect "$tmp/c" '^total complete=1' "own allocator, sample=$sample: complete profile"
  done
  if [[ $SANITIZE == 1 ]]; then ok "lua5.4 -l ephemera: skipped in the sanitizer build"; else
    cd "$tmp"
    LUA_CPATH="$MODULE_DIR/?.so;;" EPHEMERA_PROFILE="out=$tmp/l.eph" "$LUA54" -l ephemera "$SCRIPTS/known.lua" >out 2>&1 ||
      { fail "lua5.4 -l ephemera"; cat out; }
    "$CHECK" "$tmp/l.eph" >c || fail "lua5.4 -l profile unreadable"
    expect c '^total complete=1' "lua5.4 -l ephemera: profile written at lua_close"
    expect c '^group class=table line=6 freed=50 censored=0 weight=50 smin=0 smax=0$' "lua5.4 -l ephemera: 50 tables at line 6"
    expect c '^group class=table line=5 freed=100 censored=0 weight=100 smin=2 smax=2$' \
      "lua5.4 -l ephemera: 100 tables survive exactly 2 cycles (back-to-back collectgarbage() seen)"
    expect c '^group class=long_string line=12 freed=20 censored=20 ' "lua5.4 -l ephemera: lua_close's frees censored"
    printf 'require("ephemera").start{out = arg[1]}\nlocal t = {}\nfor i = 1, 10 do t[i] = {} end\nos.exit(0)\n' >x.lua
    LUA_CPATH="$MODULE_DIR/?.so;;" "$LUA54" x.lua "$tmp/x.eph" || fail "os.exit under the module"
    "$CHECK" "$tmp/x.eph" >c && expect c '^group class=table line=3 freed=0 censored=10 ' "module at exit: censored"
  fi
  ;;
cli)
  "$EPH" lua --gc incremental,pause=300,stepmul=200 -o "$tmp/g.eph" "$SCRIPTS/many.lua" 100 >/dev/null && ok "--gc incremental with parameters" || fail "--gc incremental"
  "$EPH" lua --gc generational,minormul=40 -o "$tmp/g.eph" "$SCRIPTS/many.lua" 100 >/dev/null && ok "--gc generational with parameters" || fail "--gc generational"
  "$EPH" lua --gc generational,pause=3 -o "$tmp/g.eph" "$SCRIPTS/many.lua" 2>"$tmp/err"
  [[ $? == 2 ]] && ok "--gc bad parameter rejected" || fail "--gc bad parameter"
  "$EPH" lua --summary -o "$tmp/s.eph" "$SCRIPTS/many.lua" 1000 >/dev/null 2>"$tmp/err" || fail "--summary"
  expect "$tmp/err" 'advice' "--summary gives collector advice"
  "$EPH" report "$tmp/s.eph" >"$tmp/r" 2>/dev/null || fail "report of a Lua profile"
  expect "$tmp/r" '^Lua collector advice' "report: Lua collector advice section"
  advice_re='most objects die young|many objects survive|lifetimes are mixed'
  [[ $(grep -Eo "$advice_re" "$tmp/err") == "$(grep -Eo "$advice_re" "$tmp/r")" ]] &&
    ok "report and --summary give the same advice" || fail "report and --summary advice differ"
  "$EPH" report "$tmp/s.eph" --format json >"$tmp/j" 2>/dev/null
  expect "$tmp/j" '"lua_advice":\{"gc":"generational' "report --format json: lua_advice"
  "$EPH" lua -o /nonexistent/dir/x.eph "$SCRIPTS/many.lua" 2>"$tmp/err"
  [[ $? == 1 ]] && expect "$tmp/err" '^ephemera: lua: ' "unwritable profile: clear error"
  if [[ -x $SRC/build-lua/ephemera || true ]]; then :; fi
  ;;
pacing)
  # the profiler leaves Lua's collector pacing as it was: collectgarbage("step", n) needs as many
  # steps, a generational workload runs as many collections, collectgarbage("count") ends the same
  for m in steps generational; do
    "$EPH" lua --no-profile "$SCRIPTS/pacing.lua" $m >"$tmp/plain" || fail "$m: --no-profile run"
    for spec in sample=1/1 sample=1/100; do
      "$EPH" lua --profile $spec -o "$tmp/p.eph" "$SCRIPTS/pacing.lua" $m >"$tmp/prof" || fail "$m $spec: run"
      if cmp -s "$tmp/plain" "$tmp/prof"; then ok "$m $spec: $(cat "$tmp/prof")"; else
        fail "$m $spec: pacing changed"; diff "$tmp/plain" "$tmp/prof"; fi
    done
    if [[ $SANITIZE != 1 ]]; then
      LUA_CPATH="$MODULE_DIR/?.so;;" "$LUA54" -l ephemera "$SCRIPTS/pacing.lua" $m >"$tmp/plain" || fail "$m: module, no profile"
      LUA_CPATH="$MODULE_DIR/?.so;;" EPHEMERA_PROFILE="out=$tmp/m.eph" "$LUA54" -l ephemera "$SCRIPTS/pacing.lua" $m \
        >"$tmp/prof" || fail "$m: module run"
      if cmp -s "$tmp/plain" "$tmp/prof"; then ok "$m lua5.4 -l ephemera: $(cat "$tmp/prof")"; else
        fail "$m lua5.4 -l ephemera: pacing changed"; diff "$tmp/plain" "$tmp/prof"; fi
    fi
  done
  ;;
overflow)
  # a stack overflow in a coroutine whose handler allocates (where Lua cannot run a finaliser)
  # does not stop the cycle count: the profile counts at least the collections a Lua tracer
  # armed after it sees (plus those before), and that tracer sees as many as without profiling
  "$EPH" lua --no-profile "$SCRIPTS/overflow_gc.lua" >"$tmp/plain" || fail "--no-profile run"
  "$EPH" lua -o "$tmp/o.eph" "$SCRIPTS/overflow_gc.lua" >"$tmp/out" || fail "profiled run"
  cmp -s "$tmp/plain" "$tmp/out" && ok "same collections with and without the profiler: $(cat "$tmp/out")" ||
    { fail "collections differ"; diff "$tmp/plain" "$tmp/out"; }
  "$CHECK" "$tmp/o.eph" >"$tmp/c" || fail "profile unreadable"
  late=$(sed -n 's/.*late=\([0-9]*\).*/\1/p' "$tmp/out")
  cycles=$(sed -n 's/^total .*cycles=\([0-9]*\).*/\1/p' "$tmp/c")
  if [[ -n $late && -n $cycles ]] && ((late >= 5 && cycles > late)); then ok "profile counts $cycles cycles, the late tracer $late"
  else fail "profile counts '$cycles' cycles, the late tracer '$late'"; fi
  ;;
lua53)
  # the module built for Lua 5.3 hosts (lua/5.3/ephemera.so) under lua5.3
  if [[ $SANITIZE == 1 ]]; then ok "lua5.3 -l ephemera: skipped in the sanitizer build"
  elif [[ ! -x $LUA53 || ! -f $MODULE_DIR/5.3/ephemera.so ]]; then fail "lua5.3 or the 5.3 module missing ('$LUA53')"; else
    cd "$tmp"
    LUA_CPATH="$MODULE_DIR/5.3/?.so;;" EPHEMERA_PROFILE="out=$tmp/l.eph" "$LUA53" -l ephemera "$SCRIPTS/known.lua" >out 2>&1 ||
      { fail "lua5.3 -l ephemera"; cat out; }
    "$CHECK" "$tmp/l.eph" >c || fail "lua5.3 profile unreadable"
    expect c '^total complete=1 .*runtime=lua' "lua5.3: profile written at lua_close"
    expect c '^group class=table line=5 freed=100 censored=0 weight=100 smin=2 smax=2$' "lua5.3: 100 tables survive exactly 2 cycles"
    expect c '^group class=table line=6 freed=50 censored=0 weight=50 smin=0 smax=0$' "lua5.3: 50 tables die in the first cycle"
    expect c '^group class=Lua_closure line=13 freed=30 censored=1 ' "lua5.3: 30 Lua closures"
    printf 'require("ephemera").start{out = arg[1], sample = "1/7"}\nlocal t = {}\nfor i = 1, 700 do t[i] = {} end\nos.exit(0)\n' >x.lua
    LUA_CPATH="$MODULE_DIR/5.3/?.so;;" "$LUA53" x.lua "$tmp/x.eph" || fail "os.exit under the 5.3 module"
    "$CHECK" "$tmp/x.eph" >c && expect c '^group class=table line=3 freed=0 censored=[0-9]+ weight=[0-9]+ ' "lua5.3 module at exit: censored, 1/7"
    "$EPH" report "$tmp/l.eph" >/dev/null && ok "lua5.3 profile reports" || fail "lua5.3 profile report"
  fi
  ;;
memcheck)
  # valgrind's memcheck on two files of Lua's test suite under full tracking: no error
  if [[ $SANITIZE == 1 ]]; then ok "memcheck: skipped in the sanitizer build"; else
    cp -r "$TESTES"/. "$tmp"/ && chmod -R u+w "$tmp" && cd "$tmp"
    export LUA_INIT_5_4='_port=true; function Message(m) print(m) end'
    for f in gc.lua coroutine.lua; do
      valgrind -q --error-exitcode=99 --log-file="$tmp/vg.$f" "$EPH" lua -o "$tmp/v.eph" "$f" >"$tmp/out" 2>&1
      rc=$?
      if ((rc == 0)) && ! grep -q . "$tmp/vg.$f"; then ok "memcheck $f: no error"
      else fail "memcheck $f: status $rc"; head -30 "$tmp/vg.$f"; tail -3 "$tmp/out"; fi
    done
  fi
  ;;
missing)
  # configuring without Lua 5.4 says so and skips the adapter
  cmake -S "$SRC" -B "$tmp/b" -DEPH_BUILD_BENCH=OFF -DEPH_LUA_PKG=lua-none-such >"$tmp/cfg" 2>&1 || { fail "configure without Lua"; tail "$tmp/cfg"; }
  expect "$tmp/cfg" 'Lua 5.4 not found .*skipping' "configure without Lua: clear message"
  ;;
*) echo "unknown test $t"; exit 2 ;;
esac
((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
