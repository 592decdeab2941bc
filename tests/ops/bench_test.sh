#!/usr/bin/env bash
# dfs bench end to end on local directories (the fs tests run it against dfs; here the
# point is the runner): the db and tree suites on a writable target finish with complete
# tables, a CSV and exit status 0; on a read-only target every figure fails with its
# reason, the report says INCOMPLETE and the exit status is 1.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (a read-only bind mount)"; exit 77; }
gen="$repo/../shared/bench/gen_tree.py"
[ -f "$gen" ] || { echo "SKIP: no tree generator at $gen"; exit 77; }
work="$(mktemp -d /tmp/dfs-bench-test.XXXXXX)"
cleanup() {
  mountpoint -q "$work/ro" && umount "$work/ro"
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/target" "$work/ro" "$work/base"
bench() {
  "$build/tools/dfs/dfs" bench --quick --suite db --suite tree --tree-scale 0.01 \
    --tree-generator "$gen" --baseline "$work/base" "$@"
}

bench --target "$work/target" --out "$work/good" >"$work/good.out" 2>"$work/good.err" ||
  { cat "$work/good.err"; fail "dfs bench on a writable directory failed"; }
grep -q "^| rsync -aHAX write | $work/target | [0-9.]* s | [0-9.]* s | [0-9.]* |$" "$work/good/report.md" ||
  { cat "$work/good/report.md"; fail "no rsync figure in the report"; }
grep -q "^| commits/s | $work/target | " "$work/good/report.md" || fail "no db figure"
grep -q INCOMPLETE "$work/good/report.md" && fail "a complete run says INCOMPLETE"
[ "$(grep -c "^tree,rsync -aHAX write,s," "$work/good/results.csv")" -eq 2 ] ||
  fail "the CSV lacks the target's or the baseline's rsync run"
grep -q "done" "$work/good.err" || fail "no progress shown"

mount --bind "$work/target" "$work/ro"
mount -o remount,bind,ro "$work/ro"
rc=0
bench --target "$work/ro" --out "$work/bad" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
[ "$rc" -eq 1 ] || fail "dfs bench on a read-only target exited $rc, not 1"
grep -q "^\*\*INCOMPLETE" "$work/bad/report.md" || fail "the report of a failed run does not say INCOMPLETE"
grep -q "| commits/s | $work/ro | failed: .*Read-only file system" "$work/bad/report.md" ||
  { cat "$work/bad/report.md"; fail "the db failure does not give its reason"; }
grep -q "| rsync -aHAX write | $work/ro | failed: " "$work/bad/report.md" || fail "the tree failure is not shown"
grep -q "INCOMPLETE" "$work/bad.err" || fail "stderr does not say INCOMPLETE"
echo "PASS"
