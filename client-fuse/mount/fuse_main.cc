// dfs-fuse: the dfs file system daemon, for running by hand:
//   dfs-fuse [-f] [-d] [-c CONF] [-n NAME] [-s SOURCE] [-o OPTS]... MOUNTPOINT
// SOURCE is as for mount.dfs (default ":/": the monitors of the config file, the
// root). Without -f it goes to the background once the mount is live.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "client-fuse/mount/daemon.h"
#include "common/daemon/allocator_tuning.h"

int main(int argc, char** argv) {
  dfs::tune_allocator(argv);  // may re-exec: first, before any thread starts
  CLI::App app{"dfs-fuse: mount a dfs file system"};
  std::string mountpoint;
  std::string source = ":/";
  std::string conf;
  std::string name = "admin";
  std::vector<std::string> option_lists;
  bool foreground = false;
  bool debug = false;
  app.add_option("mountpoint", mountpoint, "where to mount")->required();
  app.add_option("-s,--source", source, "mon1[,mon2...][:port]:/[subdir] (default :/)");
  app.add_option("-c,--conf", conf, "cluster config (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  app.add_option("-n,--name", name, "client name")->capture_default_str();
  app.add_option("-o", option_lists, "mount options, as for mount.dfs");
  app.add_flag("-f,--foreground", foreground, "stay in the foreground, log to stderr");
  app.add_flag("-d,--debug", debug, "trace every FUSE request (implies -f)");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> args = {source, mountpoint};
  for (const auto& l : option_lists) {
    args.push_back("-o");
    args.push_back(l);
  }
  auto options = dfs::mount::parse_mount_args(args);
  if (!options) {
    std::fprintf(stderr, "dfs-fuse: %s\n", options.error().context().c_str());
    return 1;
  }
  if (!conf.empty()) options->conf = conf;
  options->name = name == "admin" ? options->name : name;
  options->foreground = options->foreground || foreground || debug;
  options->debug = options->debug || debug;
  return dfs::mount::run_mount(*options, "dfs-fuse");
}
