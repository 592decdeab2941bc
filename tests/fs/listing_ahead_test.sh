#!/usr/bin/env bash
# Listings fetched ahead (client-fuse/libdfs/listing_prefetch.h), on a real mount: a cold
# walk of a tree (rsync's comparison after a remount) is served listings fetched ahead
# and sees exactly the tree; a listing fetched ahead never hides a change made through
# the mount after it was fetched (a create, an unlink, a rename, a chmod, in directories
# the client created itself, whose changes it defers, and in ones it did not). A directory
# the client listed whole while alone is known like one it created: lookups of missing
# names are answered without the MDS, and an rm -rf there is deferred, in batches;
# another mount sees all of it at once.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1
step "a tree of 40 directories, 3 levels, rsynced onto dfs"
for i in $(seq 1 8); do
  for j in 1 2 3 4; do
    mkdir -p "$work/src/w/d$i/s$j"
    echo "file $i $j" >"$work/src/w/d$i/s$j/f"
  done
  echo "top $i" >"$work/src/w/d$i/f"
done
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/"

step "remount; a cold walk compares the tree"
remount_client
d="$(tree_diff "$work/src" "$mnt/t")"
[ -z "$d" ] || { echo "$d" | head -40; fail "the walk over dfs differs from the source"; }

# fetched_ahead DIR: lists DIR (its subdirectories are listed ahead) and lets those
# listings arrive.
fetched_ahead() {
  ls "$1" >/dev/null
  sleep 0.5
}
step "changes after a listing was fetched ahead are seen (directories this client did not create)"
w="$mnt/t/w"
fetched_ahead "$w"
touch "$w/d1/new"
[[ "$(ls "$w/d1")" == *new* ]] || fail "a file created after its directory was listed ahead is not listed"
fetched_ahead "$w"
rm "$w/d2/f"
[[ "$(ls "$w/d2")" != *f* ]] || fail "an unlinked file is still listed"
fetched_ahead "$w"
mv "$w/d3/f" "$w/d4/moved"
[[ "$(ls "$w/d3")" != *f* ]] || fail "a file renamed away is still listed"
[[ "$(ls "$w/d4")" == *moved* ]] || fail "a file renamed in is not listed"
fetched_ahead "$w"
chmod 700 "$w/d5/s1"
mode="$(ls -l "$w/d5" | awk '$NF == "s1" {print $1}')"
[ "$mode" = "drwx------" ] || fail "the listing shows s1 as '$mode' after chmod 700"
fetched_ahead "$w"
echo "more" >>"$w/d6/f"
size="$(ls -l "$w/d6" | awk '$NF == "f" {print $5}')"
[ "$size" = "$(($(wc -c <"$work/src/w/d6/f") + 5))" ] || fail "the listing shows d6/f with $size bytes after an append"

step "the same in directories this client created (its changes there are deferred)"
mkdir -p "$mnt/n/a" "$mnt/n/b" "$mnt/n/c"
echo x >"$mnt/n/c/gone"
fetched_ahead "$mnt/n"
touch "$mnt/n/a/new"
[[ "$(ls "$mnt/n/a")" == new ]] || fail "a deferred create is not listed: $(ls "$mnt/n/a")"
fetched_ahead "$mnt/n"
mv "$mnt/n/c/gone" "$mnt/n/b/here"
[ -z "$(ls "$mnt/n/c")" ] || fail "a deferred rename's source is still listed"
[[ "$(ls "$mnt/n/b")" == here ]] || fail "a deferred rename's target is not listed"

# listings_used: remounts and prints how many listings fetched ahead the mount before
# used, as its unmount logged it (after the line itself on stderr).
listings_used() {
  remount_client
  local line
  line="$(grep -o 'directory listings fetched ahead: [0-9]*, of them used: [0-9]*' \
    "$cluster/log/client.log" | tail -1)"
  echo "${line:-no line}" >&2
  echo "${line##* }"
}

step "unmount: the client says how many listings it fetched ahead and used"
used="$(listings_used)"
[ "${used:-0}" -gt 0 ] || fail "the cold walk used no listing fetched ahead"

step "object files opened from their data fetched ahead outlive an unlink and a truncate"
# A read-only open of an object file whose data was fetched ahead is answered without
# the MDS (file_open.cc, "Opens answered locally"): nothing counts it there, so the
# client itself must keep what the reader reads.
mkdir -p "$mnt/o"
for i in 1 2 3; do head -c 300000 /dev/urandom >"$work/o$i"; cp "$work/o$i" "$mnt/o/f$i"; done
remount_client
ls -l "$mnt/o" >/dev/null  # a listing: the files' data is fetched ahead
sleep 0.5
exec 5<"$mnt/o/f1" 6<"$mnt/o/f2" 7<"$mnt/o/f3"
rm "$mnt/o/f1"
cmp - "$work/o1" <&5 || fail "a file unlinked while open (opened from data fetched ahead) reads wrong"
truncate -s 1000 "$mnt/o/f2"
rm "$mnt/o/f2"
cmp - <(head -c 1000 "$work/o2") <&6 || fail "a file truncated and unlinked while open reads wrong"
cmp - "$work/o3" <&7 || fail "a file opened from data fetched ahead reads wrong"
exec 5<&- 6<&- 7<&-
[ "$(ls "$mnt/o")" = f3 ] || fail "after the unlinks the directory lists: $(ls "$mnt/o")"
remount_client
opens="$(grep -o 'MDS calls (method: count x mean latency): .*' "$cluster/log/client.log" |
  tail -1 | grep -o ' 314: [0-9]*' | cut -d' ' -f3)"
echo "MDS opens: ${opens:-0} (the truncate's only)"
[ "${opens:-0}" -eq 1 ] || fail "the three opens were not answered from the data fetched ahead"
cmp "$mnt/o/f3" "$work/o3" || fail "f3 differs after a remount"

step "directories listed whole are known: missing names answered here, rm -rf deferred"
remount_client
ls "$mnt/t/w" "$mnt/t/w/d7" >/dev/null  # rm -rf lists d8 and below itself; w holds d8
for i in $(seq 30); do
  [ ! -e "$mnt/t/w/d7/missing$i" ] || fail "d7/missing$i exists"
done
touch "$mnt/t/w/d7/created"
rm "$mnt/t/w/d7/f"
rm -rf "$mnt/t/w/d8"
[ "$(ls "$mnt/t/w/d7")" = "$(printf 'created\ns1\ns2\ns3\ns4')" ] ||
  fail "d7 lists: $(ls "$mnt/t/w/d7" | tr '\n' ' ')"
mount_another "$work/mnt-b" "$cluster/log/client-b.log"
b_pid="$(client_pid "$work/mnt-b")"
[ ! -e "$work/mnt-b/t/w/d8" ] || fail "the other mount still sees d8 after the rm -rf"
[ "$(ls "$work/mnt-b/t/w/d7")" = "$(ls "$mnt/t/w/d7")" ] ||
  fail "the other mount lists d7 as: $(ls "$work/mnt-b/t/w/d7" | tr '\n' ' ')"
stop_mount "$work/mnt-b" "$b_pid"
remount_client
calls="$(grep -o 'MDS calls (method: count x mean latency): .*' "$cluster/log/client.log" |
  tail -1)"
lookups="$(echo "$calls" | grep -o ' 301: [0-9]*' | cut -d' ' -f3 || true)"
unlinks="$(echo "$calls" | grep -o ' 307: [0-9]*' | cut -d' ' -f3 || true)"
deferred="$(grep -o 'deferred changes sent: [0-9]*' "$cluster/log/client.log" | tail -1 |
  grep -o '[0-9]*$' || true)"
echo "MDS lookups: ${lookups:-0}, unlinks sent alone: ${unlinks:-0}, deferred: ${deferred:-0}"
[ "${lookups:-0}" -lt 15 ] || fail "the 30 missing names were looked up at the MDS"
[ "${unlinks:-0}" -eq 0 ] || fail "unlinks in directories listed whole went to the MDS one by one"
[ "${deferred:-0}" -ge 12 ] || fail "the rm -rf of d8 (11 names) and d7's changes were not deferred"
[ ! -e "$mnt/t/w/d8" ] && [ ! -e "$mnt/t/w/d7/f" ] && [ -e "$mnt/t/w/d7/created" ] ||
  fail "after a remount the changes are not all there"
step "listings fetched ahead outlive other changes: rm -rf uses them, one a change reaches goes"
mkdir -p "$work/src2"
for i in $(seq 1 6); do
  for j in 1 2 3 4; do
    mkdir -p "$work/src2/r/d$i/s$j"
    for k in 1 2 3; do echo "$i $j $k" >"$work/src2/r/d$i/s$j/f$k"; done
  done
done
rsync -aHAX --numeric-ids "$work/src2/" "$mnt/u/"
remount_client
ls "$mnt/u/r" >/dev/null  # a walk's listing: d1..d6 are listed ahead
sleep 0.5
echo late >"$mnt/u/r/d5/late"  # reaches d5's listing (its names)
chmod 600 "$mnt/u/r/d6/s2/f1"  # reaches nothing listed ahead yet
chmod 700 "$mnt/u/r/d4/s3"     # reaches d4's listing (an entry's attributes)
[ "$(ls "$mnt/u/r/d5" | tr '\n' ' ')" = "late s1 s2 s3 s4 " ] ||
  fail "d5 lists: $(ls "$mnt/u/r/d5" | tr '\n' ' ')"
mode="$(ls -l "$mnt/u/r/d4" | awk '$NF == "s3" {print $1}')"
[ "$mode" = "drwx------" ] || fail "the listing shows d4/s3 as '$mode' after chmod 700"
ls "$mnt/u/r/d6" >/dev/null  # listed: its subdirectories are listed ahead
sleep 0.5
chmod 640 "$mnt/u/r/d6/s2/f2"  # reaches the listing of s2 fetched ahead
mode="$(ls -l "$mnt/u/r/d6/s2" | awk '$NF == "f2" {print $1}')"
[ "$mode" = "-rw-r-----" ] || fail "the listing shows d6/s2/f2 as '$mode' after chmod 640"
mode="$(ls -l "$mnt/u/r/d6/s2" | awk '$NF == "f1" {print $1}')"
[ "$mode" = "-rw-------" ] || fail "the listing shows d6/s2/f1 as '$mode' after chmod 600"
remount_client
rm -rf "$mnt/u/r"
[ ! -e "$mnt/u/r" ] || fail "u/r is still there after rm -rf"
used="$(listings_used)"  # of the rm -rf of 31 directories
[ "${used:-0}" -ge 20 ] || fail "rm -rf used ${used:-0} listings fetched ahead (of 30 it could)"
[ -z "$(ls "$mnt/u")" ] || fail "after a remount u lists: $(ls "$mnt/u" | tr '\n' ' ')"
echo "PASS"
