#!/usr/bin/env bash
# Random file operations against a model of the bytes (tools/fsx, dfs-fsx), on a real
# mount of a default dev cluster (three MDS replicas):
#   - regressions: scripts of operations that once returned wrong bytes, replayed;
#   - at least 100,000 random operations per mode (buffered, mmap, direct), spread over
#     several seeds, on a file up to 256 KiB (it moves between inline data at the MDS and
#     objects on the OSDs);
#   - fewer, larger operations on a file that spans several 4 MiB objects.
# The seeds are new on every run and printed; DFS_FSX_SEED=N fixes the first one, and a
# failure prints the dfs-fsx command that replays it.
source "$(dirname "$0")/lib.sh"
fsx="$build/tools/fsx/dfs-fsx"
[ -x "$fsx" ] || fail "dfs-fsx is not built ($fsx)"
ops_per_mode="${DFS_FSX_OPS:-100000}"
seeds_per_mode=4

start_cluster
seed="${DFS_FSX_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}"
step "first seed $seed (DFS_FSX_SEED=$seed replays this run)"

run_fsx() {  # run_fsx NAME ARGS...: one dfs-fsx run on a file of its own
  local name="$1"
  shift
  "$fsx" "$mnt/$name" --quiet --log "$work/$name.ops" "$@" ||
    fail "dfs-fsx $* found wrong data (operations in $work/$name.ops; DFS_KEEP_TEST_DIR=1 keeps them)"
}

for script in "$(dirname "$0")"/fsx_regressions/*.ops; do
  step "regression $(basename "$script")"
  for mode in buffered mmap; do
    run_fsx "regression-$mode-$(basename "$script" .ops)" --mode "$mode" --replay "$script"
  done
done

# The three modes run at once, each on files of its own: the checker waits on round
# trips more than on the CPU, so this takes about half the time of one after another.
run_mode() {  # run_mode MODE: the small-file seeds, then the large file
  local mode="$1" i
  for i in $(seq 1 $seeds_per_mode); do
    run_fsx "$mode-$i" --mode "$mode" --seed $((seed + i)) --ops $((ops_per_mode / seeds_per_mode)) ||
      return 1
  done
  run_fsx "large-$mode" --mode "$mode" --seed $((seed + 100)) --ops 3000 \
    --max-size $((10 << 20)) --max-io $((1 << 20))
}
step "$ops_per_mode operations in each of buffered, mmap and direct mode ($seeds_per_mode seeds each), then 3,000 of up to 1 MiB on a file of up to 10 MiB (several objects)"
pids=()
for mode in buffered mmap direct; do
  run_mode "$mode" >"$work/fsx-$mode.log" 2>&1 &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
cat "$work"/fsx-*.log
[ $failed -eq 0 ] || fail "dfs-fsx found wrong data (above)"

step "the files read back the same after a remount (what the cluster holds)"
checksums() { (cd "$mnt" && sha256sum -- *); }
before="$(checksums)"
remount_client
[ "$before" = "$(checksums)" ] || fail "files read differently after a remount"
echo "PASS"
