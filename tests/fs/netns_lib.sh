# Shared by the three-host tests: skips unless network namespaces with a bridge and veths
# work here, and starts a dev cluster on hosts dfs1..dfs3 made by `dfs bootstrap`.
# Sourced after lib.sh.

# Probe in a throwaway namespace, so that nothing is left behind in this one.
probe="dfs-probe-$$"
if ! { ip netns add "$probe" && ip -n "$probe" link add probe-br type bridge &&
  ip -n "$probe" link add probe-a type veth peer name probe-b; } 2>/dev/null; then
  ip netns del "$probe" 2>/dev/null || true
  skip "network namespaces with a bridge and veths are unavailable (ip netns)"
fi
ip netns del "$probe"

dev() { "$repo/tools/dfs-dev" "$@" --dir "$cluster"; }

# The fstab line an operator writes (dfs bootstrap prints it), with this cluster's monitors.
fstab_line() {
  local mons
  mons="$(sed -n 's/^mon_addrs = //p' "$cluster/etc/dfs.conf" | sed 's/:[0-9]*//g')"
  echo "$mons:$port:/ $mnt dfs _netdev,name=admin,secretfile=$cluster/etc/admin.secret,conf=$cluster/etc/dfs.conf,log_file=$cluster/log/client.log 0 0"
}

# What mount(8) does with an fstab line for type dfs: /sbin/mount.dfs SOURCE DIR -o OPTIONS.
mount_fstab_line() {
  local source dir type options
  read -r source dir type options _ <<<"$1"
  [ "$type" = dfs ] || fail "fstab line of type '$type'"
  mkdir -p "$dir"
  "$build/client-fuse/mount.dfs" "$source" "$dir" -o "$options"
}

# mount_from_host DIR LOG [HOST]: mounts DIR with the fstab line's source and options,
# logging to LOG, its client in network namespace of HOST (dfs1..) if given: only the
# network, the mount itself is in this host's mount table, as mount(8) on that host would
# make it. Checks that the client runs there.
mount_from_host() {
  local dir="$1" log="$2" host="${3:-}" source options enter=() ns="" pid
  read -r source _ _ options _ <<<"$(fstab_line)"
  options="${options//log_file=$cluster\/log\/client.log/log_file=$log}"
  if [ -n "$host" ]; then
    ns="$(sed -n 's/^net_prefix=//p' "$cluster/netns.conf")-$host"
    enter=(nsenter "--net=/run/netns/$ns")
  fi
  mkdir -p "$dir"
  "${enter[@]}" "$build/client-fuse/mount.dfs" "$source" "$dir" -o "$options" ||
    fail "mounting $dir failed"
  mountpoint -q "$dir" || fail "nothing mounted at $dir"
  if [ -n "$ns" ]; then
    pid="$(client_pid "$dir")"
    [ "$(ip netns identify "$pid")" = "$ns" ] || fail "the client of $dir does not run in $host's network"
  fi
}

# wait_health WANT SECONDS: until `dfs status --format json` says health WANT.
wait_health() {
  local want="$1" i
  for ((i = 0; i < $2; i++)); do
    [ "$(dfs_cli status --format json 2>/dev/null | sed -n 's/^  "health": "\(.*\)",$/\1/p')" = "$want" ] &&
      return 0
    sleep 1
  done
  dfs_cli status || true
  return 1
}

start_three_hosts() {  # start_three_hosts [dfs-dev up options...]
  step "bootstrapping three hosts dfs1..dfs3 (namespaces) in $cluster, ports from $port"
  dev up --no-build --no-mount --hosts 3 --port "$port" "$@" >"$work/up.log" 2>&1 ||
    { cat "$work/up.log"; fail "dfs-dev up --hosts 3 failed"; }
  grep "dfs bootstrap" "$work/up.log" || true
}
