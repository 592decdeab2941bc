#!/usr/bin/env bash
# Install: `cmake --install BUILD --prefix /usr` puts the daemons, `dfs` and the file
# checker `dfs-fsx` in /usr/bin, mount.dfs in /sbin, the systemd units in
# /usr/lib/systemd/system and the benchmark's tree generator and tree digest in
# /usr/share/dfs, and nothing else anywhere (installed into a staging DESTDIR, so the machine is untouched).
# The installed units then pass `systemd-analyze verify` with no complaint at all (it
# only warns about an unknown key or a bad value, so any output fails the test), with
# the staging tree as its root and this machine's own systemd units beside ours.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
fail() { echo "FAIL: $*" >&2; exit 1; }
stage="$(mktemp -d /tmp/dfs-install-test.XXXXXX)"
trap 'rm -rf "$stage"' EXIT

DESTDIR="$stage/root" cmake --install "$build" --prefix /usr >"$stage/install.log" ||
  { cat "$stage/install.log"; fail "cmake --install failed"; }
expected="sbin/mount.dfs
usr/bin/dfs
usr/bin/dfs-fsx
usr/bin/dfs-fuse
usr/bin/dfs-mds
usr/bin/dfs-mon
usr/bin/dfs-osd
usr/lib/systemd/system/dfs-mds@.service
usr/lib/systemd/system/dfs-mon@.service
usr/lib/systemd/system/dfs-osd@.service
usr/lib/systemd/system/dfs.target
usr/share/dfs/gen_tree
usr/share/dfs/treesum"
actual="$(cd "$stage/root" && find . -type f -o -type l | sed 's|^\./||' | sort)"
if [ "$actual" != "$expected" ]; then
  diff <(echo "$expected") <(echo "$actual") || true
  fail "installed files differ from the expected set (< expected, > installed)"
fi
for f in sbin/mount.dfs usr/bin/dfs usr/bin/dfs-mon usr/bin/dfs-osd usr/bin/dfs-mds; do
  [ -x "$stage/root/$f" ] || fail "$f is not executable"
done
echo "installed: $(echo "$actual" | tr '\n' ' ')"

command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
units="$stage/root/usr/lib/systemd/system"
# systemd's own units (sysinit.target, network-online.target, ...) for ours to refer to.
cp -an /usr/lib/systemd/system/. "$units/" 2>/dev/null || true
[ -e "$units/network-online.target" ] || { echo "SKIP: this machine has no systemd units"; exit 77; }
check() {  # check UNIT...: verify passes with nothing to say
  local out
  if ! out="$(systemd-analyze verify --root="$stage/root" "$@" 2>&1)" || [ -n "$out" ]; then
    echo "$out"
    return 1
  fi
}
check dfs-mon@dfs1.service dfs-osd@0.service dfs-mds@dfs1.service dfs.target ||
  fail "systemd-analyze verify complains about the units"
echo "systemd-analyze verify: dfs-mon@dfs1 dfs-osd@0 dfs-mds@dfs1 dfs.target clean"

# The check can fail: a unit with a misspelt key, and one whose program is missing.
sed -i 's/^Restart=/Restrat=/' "$units/dfs-mon@.service"
check dfs-mon@dfs1.service >/dev/null && fail "verify did not notice a misspelt key"
rm "$stage/root/usr/bin/dfs-osd"
check dfs-osd@0.service >/dev/null && fail "verify did not notice a missing program"
echo "PASS"
