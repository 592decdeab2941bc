// `dfs status` (text or JSON) and `dfs osd tree`: what the cluster looks like right now.
#include <algorithm>
#include <map>

#include "tools/dfs/cli_context.h"
#include "tools/dfs/quorum_status.h"

namespace dfs::cli {
namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Capacity {
  uint64_t total = 0, used = 0, objects = 0;
};

void print_quorum_text(const QuorumView& q) {
  fmt::print("  quorum:   {} monitors, {} in quorum, leader {}\n", q.mons.size(), q.in_quorum,
             q.leader.empty() ? "none (election in progress or no majority)"
                              : q.leader + " (term " + std::to_string(q.term) + ")");
  fmt::print("            {:<8} {:<22} {:<13} {:>5} {:>8} {:>8} {:>5} {:>6}\n", "NAME", "ADDRESS",
             "ROLE", "TERM", "COMMIT", "APPLIED", "LAG", "EPOCH");
  for (const auto& m : q.mons) {
    if (!m.reachable) {
      fmt::print("            {:<8} {:<22} {}\n", m.name, m.addr, "unreachable");
      continue;
    }
    fmt::print("            {:<8} {:<22} {:<13} {:>5} {:>8} {:>8} {:>5} {:>6}\n", m.name, m.addr,
               m.raft.role(), m.raft.term(), m.raft.commit(), m.raft.applied(), m.lag, m.epoch);
  }
}

// The MDS line of each rank: its active replica (the one clients use) and the others.
std::vector<std::string> mds_rank_lines(const ClusterMap& map) {
  std::map<uint32_t, std::vector<const proto::MdsInfo*>> ranks;
  for (const auto& m : map.proto().mds()) ranks[m.rank()].push_back(&m);
  std::vector<std::string> lines;
  for (const auto& [rank, replicas] : ranks) {
    const auto* active = map.mds_for_rank(rank);
    std::string line = "rank " + std::to_string(rank) + ": ";
    line += active ? "active " + active->name() + fmt::format(" (term {})", active->leader_term())
                   : std::string("no active MDS");
    std::string others;
    for (const auto* m : replicas) {
      if (m == active) continue;
      others += (others.empty() ? "" : ", ") + m->name() + (m->up() ? "" : " (down)");
    }
    if (!others.empty()) line += "; standby " + others;
    lines.push_back(std::move(line));
  }
  return lines;
}

void print_json(const proto::StatusReply& status, const QuorumView& q,
                const std::vector<std::string>& warnings, int up, int in, const Capacity& cap) {
  const auto& map = status.map();
  std::string out = "{\n";
  out += "  \"fsid\": " + json_string(map.fsid()) + ",\n";
  out += fmt::format("  \"health\": \"{}\",\n", warnings.empty() ? "OK" : "WARN");
  out += "  \"warnings\": [";
  for (size_t i = 0; i < warnings.size(); ++i) out += (i ? ", " : "") + json_string(warnings[i]);
  out += "],\n";
  out += fmt::format("  \"epoch\": {},\n", map.epoch());
  out += "  \"quorum\": {\n";
  std::string leader = q.leader.empty() ? std::string("null") : json_string(q.leader);
  out += "    \"leader\": " + leader + ",\n";
  out += fmt::format("    \"leader_id\": {},\n    \"term\": {},\n", q.leader_id, q.term);
  out += fmt::format("    \"size\": {},\n    \"in_quorum\": {},\n", q.mons.size(), q.in_quorum);
  out += "    \"monitors\": [\n";
  for (size_t i = 0; i < q.mons.size(); ++i) {
    const auto& m = q.mons[i];
    out += "      {\"name\": " + json_string(m.name) + ", \"addr\": " + json_string(m.addr) +
           fmt::format(", \"id\": {}, \"reachable\": {}", m.id, m.reachable);
    if (m.reachable) {
      out += ", \"role\": " + json_string(m.raft.role()) +
             fmt::format(", \"term\": {}, \"leader_id\": {}, \"commit\": {}, \"applied\": {}, "
                         "\"last_index\": {}, \"lag\": {}, \"epoch\": {}",
                         m.raft.term(), m.raft.leader(), m.raft.commit(), m.raft.applied(),
                         m.raft.last_index(), m.lag, m.epoch);
    } else {
      out += ", \"error\": " + json_string(m.error);
    }
    out += std::string("}") + (i + 1 < q.mons.size() ? "," : "") + "\n";
  }
  out += "    ]\n  },\n";
  ClusterMap cluster_map(map);
  out += "  \"mds\": [\n";
  for (int i = 0; i < map.mds_size(); ++i) {
    const auto& m = cluster_map.proto().mds(i);
    bool active = cluster_map.mds_for_rank(m.rank()) == &m;
    out += "    {\"name\": " + json_string(m.name()) + ", \"addr\": " + json_string(m.addr()) +
           fmt::format(", \"rank\": {}, \"up\": {}, \"active\": {}, \"leader_term\": {}}}",
                       m.rank(), m.up(), active, m.leader_term()) +
           (i + 1 < map.mds_size() ? "," : "") + "\n";
  }
  out += "  ],\n";
  out += fmt::format("  \"osds\": {{\"total\": {}, \"up\": {}, \"in\": {}}},\n", map.osds_size(),
                     up, in);
  out += fmt::format("  \"pools\": {},\n", map.pools_size());
  out += fmt::format(
      "  \"capacity\": {{\"total_bytes\": {}, \"used_bytes\": {}, \"objects\": {}}}\n",
      cap.total, cap.used, cap.objects);
  out += "}\n";
  fmt::print("{}", out);
}

int print_status(const GlobalOptions& global, const std::string& format) {
  if (format != "text" && format != "json") {
    return report("status", Error(ErrorCode::kInvalidArgument,
                                  "--format must be text or json, not '" + format + "'"));
  }
  auto client = connect_client(global);
  if (!client) return report("status", client.error());
  auto status = (*client)->run((*client)->mon_status());
  if (!status) return report("status", status.error());
  auto per_mon = Duration(std::clamp(global.timeout_s, 1, 2) * 1000);
  QuorumView quorum = (*client)->run(gather_quorum(**client, *status, per_mon));
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
  for (const auto& m : quorum.mons) {
    if (!m.reachable) warnings.push_back(m.name + " at " + m.addr + " is unreachable");
  }
  if (quorum.leader.empty()) warnings.push_back("the monitors have no leader: map changes wait");
  Capacity cap;
  for (const auto& osd : map.osds()) {
    if (!osd.up()) continue;
    auto df = (*client)->run((*client)->osd_statfs(osd.id()));
    if (!df) continue;
    cap.total += df->total_bytes();
    cap.used += df->used_bytes();
    cap.objects += df->objects();
  }
  if (format == "json") {
    print_json(*status, quorum, warnings, up, in, cap);
    return 0;
  }
  fmt::print("cluster {}\n", map.fsid());
  fmt::print("  health:   {}\n", warnings.empty() ? "OK" : "WARN");
  for (const auto& w : warnings) fmt::print("            {}\n", w);
  fmt::print("  monitor:  {} (up {} s), map epoch {}\n", status->mon_entity(), status->uptime_s(),
             map.epoch());
  print_quorum_text(quorum);
  for (const auto& line : mds_rank_lines(ClusterMap(map))) fmt::print("  mds:      {}\n", line);
  fmt::print("  osds:     {} total, {} up, {} in\n", map.osds_size(), up, in);
  fmt::print("  pools:    {}\n", map.pools_size());
  fmt::print("  capacity: {:.1f} GiB used of {:.1f} GiB raw on up OSDs; {} object replicas\n",
             cap.used / double(1ull << 30), cap.total / double(1ull << 30), cap.objects);
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
  auto* status = app.add_subcommand(
      "status", "show cluster health, the monitor quorum, OSDs, pools and capacity");
  static std::string format = "text";
  status->add_option("--format", format, "text or json (the same facts, for scripts)")
      ->capture_default_str();
  status->callback([&] { exit_code = print_status(global, format); });
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
