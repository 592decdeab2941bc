// `dfs status` and `dfs osd tree`: what the cluster looks like right now.
#include <map>

#include "tools/dfs/cli_context.h"

namespace dfs::cli {
namespace {

int print_status(const GlobalOptions& global) {
  auto client = connect_client(global);
  if (!client) return report("status", client.error());
  auto status = (*client)->run((*client)->mon_status());
  if (!status) return report("status", status.error());
  const auto& map = status->map();
  int up = 0, in = 0;
  std::vector<std::string> warnings;
  for (const auto& osd : map.osds()) {
    up += osd.up();
    in += osd.in();
    if (!osd.up()) warnings.push_back("osd." + std::to_string(osd.id()) + " on " + osd.host() + " is down");
  }
  for (const auto& pool : map.pools()) {
    if (static_cast<int>(pool.min_size()) > up) {
      warnings.push_back("pool '" + pool.name() + "' needs " + std::to_string(pool.min_size()) +
                         " OSDs up for writes; " + std::to_string(up) + " are");
    }
  }
  fmt::print("cluster {}\n", map.fsid());
  fmt::print("  health:   {}\n", warnings.empty() ? "OK" : "WARN");
  for (const auto& w : warnings) fmt::print("            {}\n", w);
  fmt::print("  monitor:  {} (up {} s), map epoch {}\n", status->mon_entity(), status->uptime_s(),
             map.epoch());
  fmt::print("  osds:     {} total, {} up, {} in\n", map.osds_size(), up, in);
  fmt::print("  pools:    {}\n", map.pools_size());
  uint64_t total = 0, used = 0, objects = 0;
  for (const auto& osd : map.osds()) {
    if (!osd.up()) continue;
    auto df = (*client)->run((*client)->osd_statfs(osd.id()));
    if (!df) continue;
    total += df->total_bytes();
    used += df->used_bytes();
    objects += df->objects();
  }
  fmt::print("  capacity: {:.1f} GiB used of {:.1f} GiB raw on up OSDs; {} object replicas\n",
             used / double(1ull << 30), total / double(1ull << 30), objects);
  return 0;
}

int print_osd_tree(const GlobalOptions& global) {
  auto client = connect_client(global);
  if (!client) return report("osd tree", client.error());
  ClusterMap map = (*client)->map_snapshot();
  std::map<std::string, std::vector<const proto::OsdInfo*>> hosts;
  for (const auto& osd : map.proto().osds()) hosts[osd.host()].push_back(&osd);
  fmt::print("{:<6} {:<24} {:>8}  {:<5} {:<4} {}\n", "ID", "NAME", "WEIGHT", "UP", "IN", "ADDRESS");
  for (const auto& [host, osds] : hosts) {
    double weight = 0;
    for (const auto* o : osds) weight += o->weight();
    fmt::print("{:<6} {:<24} {:>8.3f}\n", "", "host " + host, weight);
    for (const auto* o : osds) {
      fmt::print("{:<6} {:<24} {:>8.3f}  {:<5} {:<4} {}\n", o->id(), "  osd." + std::to_string(o->id()),
                 o->weight(), o->up() ? "up" : "down", o->in() ? "in" : "out", o->addr());
    }
  }
  return 0;
}

}  // namespace

void add_status_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  app.add_subcommand("status", "show cluster health, monitor, OSDs, pools and capacity")
      ->callback([&] { exit_code = print_status(global); });
}

void add_osd_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* osd = app.add_subcommand("osd", "inspect and manage OSDs");
  osd->require_subcommand(1);
  osd->add_subcommand("tree", "show hosts and their OSDs with weight and state")
      ->callback([&] { exit_code = print_osd_tree(global); });
  static int id = -1;
  for (auto [verb, help] : {std::pair{"out", "mark an OSD out (CRUSH stops placing data on it)"},
                            std::pair{"in", "mark an OSD back in"},
                            std::pair{"down", "mark an OSD down (it re-announces itself if alive)"}}) {
    auto* cmd = osd->add_subcommand(verb, help);
    cmd->add_option("id", id, "OSD id")->required();
    cmd->callback([&global, &exit_code, verb = std::string(verb)] {
      auto client = connect_client(global);
      if (!client) {
        exit_code = report("osd " + verb, client.error());
        return;
      }
      proto::MapCommand command;
      if (verb == "out") command.mutable_mark_out()->set_id(id);
      if (verb == "in") command.mutable_mark_in()->set_id(id);
      if (verb == "down") command.mutable_mark_down()->set_id(id);
      auto epoch = (*client)->run((*client)->mon_command(command));
      if (!epoch) {
        exit_code = report("osd " + verb, epoch.error());
        return;
      }
      fmt::print("marked osd.{} {} (map epoch {})\n", id, verb, *epoch);
    });
  }
}

}  // namespace dfs::cli
