#include "client-fuse/libdfs/client_config.h"

#include "common/config/config.h"

namespace dfs::client {

Result<ClientOptions> client_options_from_config(const std::string& conf_flag) {
  std::string path = resolve_config_path(conf_flag);
  auto config = Config::load_file(path);
  if (!config) {
    return unexpected(std::move(config).error().with_context(
        "finding the cluster (use -c FILE or set DFS_CONF)"));
  }
  ClientOptions options;
  options.fsid = config->get_or("global", "fsid", "");
  options.mon_addrs = split_list(config->get_or("global", "mon_addrs", ""));
  if (options.mon_addrs.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "no mon_addrs in [global] of " + path);
  }
  return options;
}

}  // namespace dfs::client
