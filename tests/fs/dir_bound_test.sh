#!/usr/bin/env bash
# The MDS bounds what one mount owns, on two real mounts of one cluster (three MDS
# replicas, [mds] max_dirs_per_client = 32 here, 16,384 by default):
#   - mount A alone (caching the whole file system) rsyncs an lxc-shaped tree of about
#     450 directories: it owns every directory it creates too (for when another mount
#     comes), so the MDS recalls the least recently used past the bound; A acknowledges
#     them at once, pushing nothing (its log says so);
#   - with mount B up, mount A does not cache the whole file system; it owns the
#     directories it creates. A rsyncs an lxc-shaped tree of about 450 directories: the
#     MDS recalls A's least recently used directories whenever A owns more than 32 (its
#     log says so, A's log says it gave them up), and once A is quiet `dfs client ls`
#     shows it owning at most 32, and some (the fast path goes on where A works now);
#   - A works again in directories it gave up long ago (creates, a rename, an unlink,
#     a rewrite): nothing is lost;
#   - the trees are identical to the source on A, on B and on a fresh mount.
source "$(dirname "$0")/lib.sh"
bound=32

start_cluster --max-dirs-per-client "$bound"
mnt2="$work/mnt2"
trap 'rc=$?; stop_mount "$mnt2" "$(client_pid "$mnt2")"; cleanup $rc' EXIT

# owned_by_a: the directories A's session owns, as `dfs client ls` shows them. A is
# the session whose mount has the most: B creates nothing.
owned_by_a() {
  dfs_cli client ls --format json | python3 -c '
import json, sys
print(max([s["owned_dirs"] for s in json.load(sys.stdin)["sessions"] if s["renewing"]] or [0]))'
}
bound_recalls() { grep -c "the least recently used go back" "$cluster"/log/mds.*.log | awk -F: '{ n += $NF } END { print n + 0 }'; }

step "generating a tree (scale 0.1)"
gen_tree "$work/src" 0.1
dirs=$(find "$work/src" -type d | wc -l)
[ "$dirs" -gt $((4 * bound)) ] || fail "the tree has only $dirs directories"

step "A alone rsyncs $dirs directories"
rsync -aHAX --numeric-ids "$work/src/" "$work/src0/"  # kept as it is now: changes follow
rsync -aHAX --numeric-ids "$work/src/" "$mnt/alone/" || fail "rsync into A (alone) failed"
alone_recalls=$(bound_recalls)
echo "recalls for the bound while A was alone: $alone_recalls"
[ "$alone_recalls" -ge 1 ] || fail "the MDS never recalled directories of A alone for the bound"
grep -q "exclusive caching covers them still" "$cluster/log/client.log" ||
  fail "A alone did not acknowledge the bound's recalls at once"
if grep -q "pushing what was deferred" "$cluster/log/client.log"; then
  grep "recalled by the MDS" "$cluster/log/client.log" | head -5
  fail "A alone pushed what it deferred for a recall of the bound"
fi

step "mounting B"
mount_another "$mnt2" "$cluster/log/client-b.log"

step "A rsyncs $dirs directories while B is mounted"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/" || fail "rsync into A failed"
recalls=$(($(bound_recalls) - alone_recalls))
echo "recalls for the bound: $recalls"
[ "$recalls" -ge 1 ] || fail "the MDS never recalled directories for the bound"
grep -q "owned directories or files recalled by the MDS (it holds more than $bound directories, files and read shares.*pushing" \
  "$cluster/log/client.log" || fail "A's log does not say it pushed and gave up owned directories"
owned=""
for _ in $(seq 50); do
  owned=$(owned_by_a)
  [ "$owned" -le "$bound" ] && break
  sleep 0.2
done
echo "A owns $owned directories once quiet (bound $bound)"
[ "$owned" -le "$bound" ] || fail "A owns $owned directories, more than the bound $bound"
[ "$owned" -ge 1 ] || fail "A owns no directory at all: the bound took everything"

step "A works again in directories it gave up"
# The first directories rsync made are the least recently used: long given up.
mapfile -t early < <(cd "$work/src" && find . -mindepth 1 -maxdepth 2 -type d | sort | sed -n 1,8p)
for d in "${early[@]}"; do
  for i in 1 2 3; do echo "again $d $i" >"$mnt/t/$d/again.$i"; echo "again $d $i" >"$work/src/$d/again.$i"; done
  mv "$mnt/t/$d/again.1" "$mnt/t/$d/again.moved"
  mv "$work/src/$d/again.1" "$work/src/$d/again.moved"
  rm "$mnt/t/$d/again.2" "$work/src/$d/again.2"
done
# sed reads to the end: head would quit early and, under pipefail, sort's SIGPIPE fail
# the assignment.
f=$(cd "$work/src" && find . -type f -size +10k | sort | sed -n 1p)
head -c 100000 /dev/urandom >"$work/rewrite"
cp "$work/rewrite" "$mnt/t/$f" && cp "$work/rewrite" "$work/src/$f"
touch -r "$work/src/$f" "$mnt/t/$f"
for d in "${early[@]}"; do touch -r "$work/src/$d" "$mnt/t/$d"; done
sync -f "$mnt/t"

step "the tree is whole on A, on B and on a fresh mount"
diff_a=$(tree_diff "$work/src" "$mnt/t")
[ -z "$diff_a" ] || { echo "$diff_a" | head -20; fail "A's tree differs from the source"; }
diff_alone=$(tree_diff "$work/src0" "$mnt2/alone")
[ -z "$diff_alone" ] || { echo "$diff_alone" | head -20; fail "the copy A made alone differs on B"; }
diff_b=$(tree_diff "$work/src" "$mnt2/t")
[ -z "$diff_b" ] || { echo "$diff_b" | head -20; fail "B's tree differs from the source"; }
stop_mount "$mnt2" "$(client_pid "$mnt2")"
unmount_client "$mnt"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" >/dev/null || fail "remount failed"
diff_c=$(tree_diff "$work/src" "$mnt/t")
[ -z "$diff_c" ] || { echo "$diff_c" | head -20; fail "the fresh mount's tree differs from the source"; }
diff_c=$(tree_diff "$work/src0" "$mnt/alone")
[ -z "$diff_c" ] || { echo "$diff_c" | head -20; fail "the fresh mount's copy made alone differs"; }
echo "PASS: dir_bound ($recalls recalls for the bound; A kept $owned of $dirs directories)"
