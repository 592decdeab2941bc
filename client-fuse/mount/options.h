// Mount options of mount.dfs and dfs-fuse: the source "mon1[,mon2...][:port]:/[subdir]"
// and the -o list, as mount(8) and /etc/fstab pass them. Pure parsing and validation
// (no I/O besides checking that files named by options exist), so a bad line fails
// before anything is started, with one clear message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client-fuse/libdfs/mount_source.h"
#include "common/status/status.h"

namespace dfs::mount {

using client::parse_source;
using client::Source;

struct MountOptions {
  Source source;
  std::string source_text;  // as given: shown as the file system's name in /proc/mounts
  std::string mountpoint;
  std::string name = "admin";  // client.NAME
  std::string secretfile;
  std::string conf;  // config file: monitors when the source names none
  // The cluster the monitors must belong to (fsid=); unset: the config file's fsid
  // (conf=, $DFS_CONF or /etc/dfs/dfs.conf), none without a config file.
  std::string fsid;
  std::string fs;    // file system name (one per cluster for now)
  bool read_only = false;
  bool foreground = false;
  bool debug = false;  // libfuse request tracing; implies foreground
  bool verbose = false;
  bool sloppy = false;                      // mount -s: unknown options are ignored
  bool help = false;                        // -h or --help: print mount_usage() and stop
  std::vector<std::string> kernel_options;  // nosuid, nodev, noatime, ... passed through
  // Seconds the kernel may cache names, attributes and "no such name". Unset, they
  // follow the cache mode (kernel_cache_seconds).
  std::optional<double> entry_timeout;
  std::optional<double> attr_timeout;
  std::optional<double> negative_timeout;
  uint32_t op_timeout_s = 60;     // a request the cluster cannot serve fails with EIO after it
  uint32_t mount_timeout_s = 30;  // monitors and MDS must answer within it
  bool writeback_cache = true;
  bool exclusive = true;  // cache=exclusive (default) or cache=shared
  bool posix_acl = true;
  bool splice = true;
  // killpriv (default) or nokillpriv: whether the kernel is asked to leave clearing
  // privileges to us (client-fuse/fuse/killpriv_v2.h); nokillpriv measures the difference.
  bool handle_killpriv = true;
  uint64_t readahead_bytes = 8u << 20;
  // listing_data_kb=KB: listings carry inline files' data up to this size (exclusive
  // mode; 0: off). See FileClientOptions::readdir_inline_max.
  uint32_t listing_data_bytes = 64u << 10;
  // prefetch_listings=N: subdirectories' listings fetched ahead of a tree walk, N at a
  // time (exclusive mode; 0: off). See client-fuse/libdfs/listing_prefetch.h.
  uint32_t prefetch_listings = 16;
  // prefill_kb=KB: a read-only open of a file of at most this size whose whole data
  // the client holds puts it in the page cache (exclusive mode; 0: off). See
  // client-fuse/fuse/file_ops.cc, fill_page_cache.
  uint64_t prefill_bytes = 4096u << 10;
  // write_behind_mb=MB: page-cache object writes acknowledged before the OSDs have
  // them, up to this much in flight (exclusive mode; 0: off). See
  // client-fuse/libdfs/write_behind.cc.
  uint64_t write_behind_bytes = 64u << 20;
  // data_ahead_mb=MB: listed object files' data fetched ahead of a walk that reads
  // them, up to this much held (exclusive mode; 0: off). See
  // client-fuse/libdfs/data_ahead.h.
  uint64_t data_ahead_bytes = 32u << 20;
  // poll_us=N: how long the FUSE thread keeps polling /dev/fuse after a request before
  // it sleeps (client-fuse/fuse/channel.h); 0: sleep at once. Unset: busy_poll_us_for.
  std::optional<uint32_t> busy_poll_us;
  std::string log_file;
  std::string log_level = "info";
};

// The kernel cache lifetime for an option left unset: long while the mount holds
// exclusive caching (every change passes through this one client, so the kernel's copy
// cannot go stale behind its back; a recall invalidates it), none while shared.
inline constexpr double kExclusiveCacheSeconds = 60.0;
inline constexpr double kSharedCacheSeconds = 0.0;
inline double kernel_cache_seconds(const std::optional<double>& set, bool exclusive) {
  return set.value_or(exclusive ? kExclusiveCacheSeconds : kSharedCacheSeconds);
}

// poll_us left unset: 50 us where the caller and the FUSE thread can run on different
// CPUs; 0 on a single CPU, where polling would only keep the caller from running.
inline uint32_t busy_poll_us_for(const std::optional<uint32_t>& set, unsigned cpus) {
  return set.value_or(cpus > 1 ? 50 : 0);
}

// Applies one comma-separated -o list to `options`. Errors: kInvalidArgument naming
// the first bad option (unknown, malformed value, missing secretfile).
Status apply_option_list(MountOptions& options, const std::string& list);

// mount.dfs SOURCE DIR [-o OPTIONS]... [-f] [-v] [-n] [-s] [-d]
// (`args` excludes argv[0]). Errors: kInvalidArgument.
Result<MountOptions> parse_mount_args(const std::vector<std::string>& args);

// The text of mount.dfs --help: usage, flags and every -o option with its default.
std::string mount_usage();

// The -o options libfuse passes to the kernel for this mount.
std::string fuse_mount_options(const MountOptions& options, bool is_root);

}  // namespace dfs::mount
