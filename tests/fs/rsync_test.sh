#!/usr/bin/env bash
# An lxc-shaped tree rsynced onto dfs and back is byte-identical
# (contents, modes, owners, mtimes, symlinks, hard links, xattrs, devices, fifos);
# tar -x onto the mount (its ACLs that repeat the mode no log entries of their own) and
# rm -rf of it work; `dfs bench` names the metadata configuration it measured.
source "$(dirname "$0")/lib.sh"
scale="${DFS_TREE_SCALE:-0.05}"
mds="${DFS_TEST_MDS:-3}"  # MDS replicas of rank 0: 3 (dfs-dev's default) or 1

start_cluster --mds "$mds"
step "generating a tree (scale $scale)"
gen_tree "$work/src" "$scale"

step "rsync onto dfs"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/"
step "remounting: the copy must come from what the MDS and OSDs hold, not the client"
# The client answers attribute changes before the MDS has them (deferred changes) and
# caches what it learned; a fresh mount sees only the cluster's state.
umount "$mnt"
# Names this client created are known to it with their inodes, so the kernel's lookups
# of them (it asks again when a dentry times out, e.g. for rsync's O_PATH walks) need
# no MDS: only the few outside what it created (the mount's root) may reach the MDS.
for _ in $(seq 100); do  # the client logs its MDS calls as it exits, after umount returns
  pgrep -f "mount.dfs .* $mnt( |\$)" >/dev/null || break
  sleep 0.2
done
lookups="$(grep -o 'MDS calls (method: count x mean latency): .*' "$cluster/log/client.log" |
  tail -1 | grep -o '301: [0-9]*' | cut -d' ' -f2)"
echo "MDS lookups during the rsync: ${lookups:-0}"
[ "${lookups:-0}" -le 10 ] || fail "rsync made ${lookups} lookups at the MDS (want <= 10)"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" >/dev/null || fail "remount failed"
step "rsync back to local disk"
rsync -aHAX --numeric-ids "$mnt/t/" "$work/back/"

step "comparing source with the dfs copy and with the copy back"
d1="$(tree_diff "$work/src" "$mnt/t")"
[ -z "$d1" ] || { echo "$d1" | head -40; fail "the dfs copy differs from the source"; }
d2="$(tree_diff "$work/src" "$work/back")"
[ -z "$d2" ] || { echo "$d2" | head -40; fail "the copy back differs from the source"; }

# mds_entries KIND: the log entries of that kind (setxattr, setattr...) the rank's
# leaders committed, from each MDS's metrics (its log names the address).
mds_entries() {
  local url total=0 n
  for log in "$cluster"/log/mds.*.log; do
    url="$(grep -o 'metrics for Prometheus at http://[^ ]*' "$log" | tail -1 | awk '{print $NF}')"
    n="$(http_get "$url" |
      awk -v kind="kind=\"$1\"" 'index($0, "dfs_mds_commit_entries_by_kind_total{") == 1 &&
        index($0, kind) { s += $2 } END { print s + 0 }')"
    total=$((total + n))
  done
  echo "$total"
}

step "tar -x onto dfs"
tar -C "$work/src" --xattrs --xattrs-include='*' --acls -cf "$work/tree.tar" .
mkdir "$mnt/x"
setxattrs_before="$(mds_entries setxattr)"
tar -C "$mnt/x" --xattrs --xattrs-include='*' --acls --numeric-owner -xpf "$work/tree.tar"
d3="$(tree_diff "$work/src" "$mnt/x")"
[ -z "$d3" ] || { echo "$d3" | head -40; fail "the tar -x copy differs from the source"; }
# tar sets an access ACL on every file and directory, one its mode already says: each
# only touches the ctime and goes with the inode's attribute change, not as an entry.
python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY))' "$mnt/x"
setxattrs=$(($(mds_entries setxattr) - setxattrs_before))
inodes="$(find "$work/src" | wc -l)"
echo "tar -x: $setxattrs setxattr entries at the MDS for $inodes inodes"
((setxattrs * 10 < inodes)) ||
  fail "tar -x's ACLs that only repeat the mode took $setxattrs setxattr entries ($inodes inodes)"

step "rm -rf on dfs"
rm -rf "$mnt/t" "$mnt/x"
left="$(ls -A "$mnt")"
[ -z "$left" ] || fail "rm -rf left: $left"

step "dfs bench names the configuration it measured"
mkdir "$work/local"
"$build/tools/dfs/dfs" bench --quick --suite meta --rounds 1 --target "$mnt" \
  --target "$work/local" --baseline "$work/base" --out "$work/bench" >"$work/bench.out" 2>&1 ||
  { cat "$work/bench.out"; fail "dfs bench failed"; }
if [ "$mds" -eq 3 ]; then
  said="rank 0 replicated by a Raft group of 3 MDS (mds\.[a-c] leading;"
  said+=" mds\.[a-c], mds\.[a-c] following), the default"
else
  said="rank 0 on one MDS (mds\.a) with its own log, not replicated (the default is 3 replicas)"
fi
grep -q "^- target $mnt: dfs \`.*\` mounted at $mnt: metadata $said; 3 of 3 OSDs up" \
  "$work/bench/report.md" ||
  { head -8 "$work/bench/report.md"; fail "the report does not say: $said"; }
grep -q "^- target $work/local: .* (not dfs)$" "$work/bench/report.md" ||
  { head -8 "$work/bench/report.md"; fail "the report does not say the local target is not dfs"; }
echo "PASS"
