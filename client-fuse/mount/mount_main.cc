// mount.dfs: the helper `mount -t dfs SRC DIR -o OPTS` (and /etc/fstab) runs:
//   mount.dfs mon1[,mon2...][:port]:/[subdir] DIR [-o name=NAME,secretfile=F,ro,...] [-f]
// It validates everything it can before starting, then runs the file system daemon in
// the background and exits 0 once the mount is live, or 1 with one line saying why not.
#include <cstdio>

#include "client-fuse/mount/daemon.h"
#include "common/daemon/allocator_tuning.h"

int main(int argc, char** argv) {
  dfs::tune_allocator(argv);  // may re-exec: first, before any thread starts
  std::vector<std::string> args(argv + 1, argv + argc);
  auto options = dfs::mount::parse_mount_args(args);
  if (!options) {
    std::fprintf(stderr, "mount.dfs: %s\n", options.error().context().c_str());
    return 1;
  }
  if (options->help) {
    std::fputs(dfs::mount::mount_usage().c_str(), stdout);
    return 0;
  }
  return dfs::mount::run_mount(*options, "mount.dfs");
}
