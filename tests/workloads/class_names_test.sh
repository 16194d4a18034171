#!/usr/bin/env bash
# class_names_test.sh EPHEMERA: a class list naming a class the workload
# does not have (--retain, --profile classes=) stops before the run, exit 2,
# with one line naming the class and the workload's classes; good names run.
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for opt in "--retain Fraction,Nope" "--profile mode=gc,classes=Fraction,Nope"; do
  # shellcheck disable=SC2086 # opt is two words
  "$bin" run dataframe --size small $opt -o "$dir/p.eph" >"$dir/out" 2>"$dir/err"
  rc=$?
  [[ $rc == 2 ]] || fail "$opt: exit $rc, expected 2"
  [[ $(wc -l <"$dir/err") == 1 ]] || fail "$opt: not one line: $(cat "$dir/err")"
  grep -q "no class 'Nope' (it has: .*NumberParser" "$dir/err" || fail "$opt: message: $(cat "$dir/err")"
  [[ -s $dir/out ]] && fail "$opt: the workload ran"
done
"$bin" run dataframe --size small --profile mode=gc,classes=Fraction,NumberParser -o "$dir/p.eph" >/dev/null ||
  fail "good class names refused"
echo "ok"
