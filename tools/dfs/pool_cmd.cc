// `dfs pool create|ls|rm`.
#include "tools/dfs/cli_context.h"

namespace dfs::cli {
namespace {

struct PoolArgs {
  std::string name;
  uint32_t size = 3;
  uint32_t min_size = 2;
  uint32_t pg_num = 64;
};

int create_pool(const GlobalOptions& global, const PoolArgs& args) {
  auto client = connect_client(global);
  if (!client) return report("pool create", client.error());
  proto::MapCommand command;
  auto* create = command.mutable_create_pool();
  create->set_name(args.name);
  create->set_size(args.size);
  create->set_min_size(args.min_size);
  create->set_pg_num(args.pg_num);
  auto epoch = (*client)->run((*client)->mon_command(command));
  if (!epoch) return report("pool create " + args.name, epoch.error());
  fmt::print("created pool '{}' (size {}, min_size {}, pg_num {}) at map epoch {}\n", args.name,
             args.size, args.min_size, args.pg_num, *epoch);
  return 0;
}

int list_pools(const GlobalOptions& global) {
  auto client = connect_client(global);
  if (!client) return report("pool ls", client.error());
  ClusterMap map = (*client)->map_snapshot();
  fmt::print("{:<4} {:<20} {:>5} {:>9} {:>7}\n", "ID", "NAME", "SIZE", "MIN_SIZE", "PG_NUM");
  for (const auto& pool : map.proto().pools()) {
    fmt::print("{:<4} {:<20} {:>5} {:>9} {:>7}\n", pool.id(), pool.name(), pool.size(),
               pool.min_size(), pool.pg_num());
  }
  return 0;
}

int remove_pool(const GlobalOptions& global, const std::string& name, bool sure) {
  if (!sure) {
    fmt::print(stderr, "dfs: pool rm: removing pool '{}' makes its objects unreachable; "
                       "pass --yes-i-really-mean-it\n", name);
    return 1;
  }
  auto client = connect_client(global);
  if (!client) return report("pool rm", client.error());
  proto::MapCommand command;
  command.mutable_delete_pool()->set_name(name);
  auto epoch = (*client)->run((*client)->mon_command(command));
  if (!epoch) return report("pool rm " + name, epoch.error());
  fmt::print("removed pool '{}' at map epoch {}\n", name, *epoch);
  return 0;
}

}  // namespace

void add_pool_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* pool = app.add_subcommand("pool", "create, list and remove pools");
  pool->require_subcommand(1);
  static PoolArgs args;
  auto* create = pool->add_subcommand("create", "create a replicated pool");
  create->add_option("name", args.name, "pool name")->required();
  create->add_option("--size", args.size, "replicas per object")->capture_default_str();
  create->add_option("--min-size", args.min_size, "replicas that must be durable to acknowledge a write")
      ->capture_default_str();
  create->add_option("--pg-num", args.pg_num, "placement groups")->capture_default_str();
  create->callback([&] { exit_code = create_pool(global, args); });
  pool->add_subcommand("ls", "list pools")->callback([&] { exit_code = list_pools(global); });
  static std::string rm_name;
  static bool sure = false;
  auto* rm = pool->add_subcommand("rm", "remove a pool");
  rm->add_option("name", rm_name, "pool name")->required();
  rm->add_flag("--yes-i-really-mean-it", sure, "confirm");
  rm->callback([&] { exit_code = remove_pool(global, rm_name, sure); });
}

}  // namespace dfs::cli
