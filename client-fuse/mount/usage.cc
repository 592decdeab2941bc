// mount.dfs --help: every option apply_option accepts, with its default. The unit test
// (mount_options_test.cc) checks that each accepted key appears here.
#include "client-fuse/mount/options.h"

namespace dfs::mount {

std::string mount_usage() {
  return R"(usage: mount.dfs mon1[,mon2...][:port]:/[subdir] DIR [-o OPTIONS] [-f] [-v] [-s] [-d]
       mount -t dfs SOURCE DIR -o OPTIONS, or a line in /etc/fstab:
       dfs1,dfs2,dfs3:/  /mnt/dfs  dfs  name=admin,_netdev  0  0

Mounts the dfs file system whose monitors are named in SOURCE (or, with ":/", in the
config file's mon_addrs) on DIR, and returns once the mount is live.

flags:
  -f    stay in the foreground, log to stderr      -v    verbose
  -s    sloppy: ignore unknown options            -d    trace every FUSE request (implies -f)
  -n    accepted (mount(8)'s "no mtab")           -h, --help    this text

options (-o, comma-separated):
  name=NAME             client name, client.NAME (default admin)
  secretfile=PATH       file holding the client's key
  conf=PATH             cluster config (default $DFS_CONF, then /etc/dfs/dfs.conf)
  fs=NAME               file system name
  fsid=UUID             the cluster the monitors must belong to; the mount fails if
                        they belong to another (default: fsid in the config file)
  ro                    read-only
  cache=exclusive|shared
                        exclusive (default): ask the MDS for exclusive caching, which
                        it grants while this is the only mount and recalls when another
                        mounts: then attributes and names are cached exactly, changes
                        are sent in batches and writes go behind ("exclusive mode"
                        below); shared: never ask, every question goes to the MDS
  entry_timeout=SEC     how long the kernel caches names        (default 60 in exclusive
  attr_timeout=SEC      ... attributes                           mode, 0 in shared)
  negative_timeout=SEC  ... "no such name" (0: off)
  op_timeout=SEC        a request the cluster cannot serve fails with EIO after it (60)
  mount_timeout=SEC     the monitors and the MDS must answer within it (30)
  readahead_kb=KB       sequential read-ahead (8192)
  listing_data_kb=KB    directory listings bring the data of files stored inline up
                        to this size, so reading them costs no metadata request
                        (64; 0: off; exclusive mode only)
  prefetch_listings=N   once a directory is listed, list its subdirectories ahead of
                        the walk (rsync, tar, find), N at a time (16; 0: off;
                        exclusive mode only)
  write_behind_mb=MB    a written file's data is acknowledged once it is on its way to
                        the OSDs, up to this much at a time; fsync, reads and unmount
                        wait for it (64; 0: off; exclusive mode only)
  data_ahead_mb=MB      once a directory is listed, read its files' data ahead of a
                        walk that reads them (rsync, tar, cp -a), up to this much
                        held (32; 0: off; exclusive mode only)
  prefill_kb=KB         a file of at most this size opened for reading, whose whole
                        data the client holds already (listed with it, or fetched
                        ahead), is placed in the page cache at open, so reading it
                        costs no request (4096; 0: off; exclusive mode only)
  poll_us=US            after a request, keep polling for the next one this long before
                        sleeping: spares a wake-up per request under load (50 with more
                        than one CPU, else 0: off)
  writeback|nowriteback the kernel's write-back cache (on)
  acl|noacl             POSIX ACLs (on)
  splice|nosplice       splice requests from the kernel (on)
  killpriv|nokillpriv   ask the kernel to leave clearing setuid and setgid on write,
                        truncate and chown to us (on)
  debug                 as -d
  log_file=PATH         the client's log (default /var/log/dfs/client.NAME.log as root;
                        stderr with -f)
  log_level=LEVEL       trace, debug, info (default), warn, error or off
  nosuid, nodev, noexec, noatime, ...   passed to the kernel
  _netdev, auto, noauto, nofail, defaults, user, x-*, comment=...   fstab's, accepted
)";
}

}  // namespace dfs::mount
