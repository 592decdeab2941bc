// `dfs status` (text or JSON) and `dfs osd tree`: what the cluster looks like right now.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "common/capacity/cluster_space.h"
#include "common/util/host_port.h"
#include "tools/dfs/cli_context.h"
#include "tools/dfs/health.h"
#include "tools/dfs/mds_status.h"
#include "tools/dfs/quorum_status.h"

namespace dfs::cli {
namespace {

// Placement groups and recovery, summed over the up OSDs' statfs replies.
struct PgView {
  uint32_t total = 0;     // PGs of every pool
  uint32_t active = 0;    // peered for their acting set by their primary
  uint32_t degraded = 0;  // fewer OSDs up in their acting set than the pool's size
  uint64_t pending = 0;   // objects peering still has to copy or remove
  double rate = 0;        // objects recovered per second, sampled over one second
};

// "10.0.0.2:6800" -> "10.0.0.2"; "[fd00::1]:6800" -> "[fd00::1]".
std::string host_of_addr(const std::string& addr) {
  auto split = split_host_port(addr);
  return split ? split->host : addr;
}

std::string progress_bar(uint32_t done, uint32_t total, int width = 20) {
  int filled = total == 0 ? width : static_cast<int>(uint64_t{done} * width / total);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

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

// Each rank's active replica (the one clients use), then every replica's Raft state.
void print_mds_text(const std::vector<MdsRow>& rows) {
  std::map<uint32_t, std::vector<const MdsRow*>> ranks;
  for (const auto& r : rows) ranks[r.rank].push_back(&r);
  for (const auto& [rank, replicas] : ranks) {
    const MdsRow* active = nullptr;
    for (const auto* r : replicas) {
      if (r->active) active = r;
    }
    std::string line = "rank " + std::to_string(rank) + ": ";
    if (!active) {
      line += "no active MDS";
    } else if (!active->replicated) {
      line += "active " + active->name + " (single replica)";
    } else {
      line += fmt::format("active {} (term {}), {} replicas", active->name, active->leader_term,
                          replicas.size());
    }
    fmt::print("  mds:      {}\n", line);
    bool any_raft = false;
    for (const auto* r : replicas) any_raft = any_raft || r->replicated || !r->error.empty();
    if (!any_raft) continue;
    fmt::print("            {:<8} {:<22} {:<13} {:>5} {:>8} {:>8} {:>5}\n", "NAME", "ADDRESS",
               "ROLE", "TERM", "COMMIT", "APPLIED", "LAG");
    for (const auto* r : replicas) {
      if (!r->replicated) {
        fmt::print("            {:<8} {:<22} unreachable: {}\n", r->name, r->addr, r->error);
        continue;
      }
      fmt::print("            {:<8} {:<22} {:<13} {:>5} {:>8} {:>8} {:>5}\n", r->name, r->addr,
                 r->raft.role(), r->raft.term(), r->raft.commit(), r->raft.applied(), r->lag);
    }
  }
}

// The map's fences, as the health verdict and the JSON take them.
std::vector<ClientEviction> evictions_of(const proto::ClusterMap& map) {
  std::vector<ClientEviction> out;
  for (const auto& f : map.fenced_clients()) out.push_back({f.entity(), f.at_ms(), f.reason(), f.epoch()});
  return out;
}

// Every fence the map still keeps (24 hours), not only the recent ones the warnings name.
std::string evictions_json(const std::vector<ClientEviction>& evictions, uint64_t now_ms) {
  std::string out = "[";
  for (size_t i = 0; i < evictions.size(); ++i) {
    const auto& e = evictions[i];
    out += fmt::format("{}{{\"client\": {}, \"at_ms\": {}, \"age_s\": {}, \"epoch\": {}, "
                       "\"reason\": {}}}",
                       i ? ", " : "", json_string(e.entity), e.at_ms,
                       eviction_age_ms(e, now_ms) / 1000, e.epoch, json_string(e.reason));
  }
  return out + "]";
}

void print_json(const proto::StatusReply& status, const QuorumView& q,
                const std::vector<MdsRow>& mds, const Health& health, int up,
                int in, const capacity::ClusterSpace& cap, const PgView& pgs, uint64_t now_ms) {
  const auto& map = status.map();
  std::string out = "{\n";
  out += "  \"fsid\": " + json_string(map.fsid()) + ",\n";
  out += fmt::format("  \"health\": \"{}\",\n", severity_name(health.overall));
  out += "  \"warnings\": [";
  for (size_t i = 0; i < health.items.size(); ++i) {
    out += (i ? ", " : "") + json_string(health.items[i].text);
  }
  out += "],\n  \"notes\": [";
  for (size_t i = 0; i < health.notes.size(); ++i) {
    out += (i ? ", " : "") + json_string(health.notes[i]);
  }
  out += "],\n  \"checks\": [";
  for (size_t i = 0; i < health.items.size(); ++i) {
    out += fmt::format("{}{{\"severity\": \"{}\", \"text\": {}}}", i ? ", " : "",
                       severity_name(health.items[i].severity), json_string(health.items[i].text));
  }
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
  out += "  \"mds\": [\n";
  for (size_t i = 0; i < mds.size(); ++i) {
    const auto& m = mds[i];
    out += "    {\"name\": " + json_string(m.name) + ", \"addr\": " + json_string(m.addr) +
           fmt::format(", \"rank\": {}, \"up\": {}, \"active\": {}, \"leader_term\": {}, "
                       "\"replicated\": {}",
                       m.rank, m.up, m.active, m.leader_term, m.replicated);
    if (m.replicated) {
      out += ", \"role\": " + json_string(m.raft.role()) +
             fmt::format(", \"term\": {}, \"commit\": {}, \"applied\": {}, \"lag\": {}",
                         m.raft.term(), m.raft.commit(), m.raft.applied(), m.lag);
    } else if (!m.error.empty()) {
      out += ", \"error\": " + json_string(m.error);
    }
    out += std::string("}") + (i + 1 < mds.size() ? "," : "") + "\n";
  }
  out += "  ],\n";
  out += "  \"evicted_clients\": " + evictions_json(evictions_of(map), now_ms) + ",\n";
  out += fmt::format("  \"osds\": {{\"total\": {}, \"up\": {}, \"in\": {}}},\n", map.osds_size(),
                     up, in);
  out += fmt::format("  \"pools\": {},\n", map.pools_size());
  out += fmt::format("  \"pgs\": {{\"total\": {}, \"active\": {}, \"degraded\": {}}},\n",
                     pgs.total, pgs.active, pgs.degraded);
  out += fmt::format("  \"recovery\": {{\"pending_objects\": {}, \"objects_per_s\": {:.1f}}},\n",
                     pgs.pending, pgs.rate);
  // Bytes count each device once; "osds" answered, "devices" is how many disks they are on.
  out += fmt::format(
      "  \"capacity\": {{\"total_bytes\": {}, \"used_bytes\": {}, \"objects\": {}, "
      "\"osds\": {}, \"devices\": {}}}\n",
      cap.total_bytes, cap.used_bytes, cap.objects, cap.osds, cap.devices.size());
  out += "}\n";
  fmt::print("{}", out);
}

// What a status run prints: the whole screen, or only the health verdict.
enum class View { kStatus, kHealth, kHealthDetail };

int print_status(const GlobalOptions& global, const std::string& format, View view = View::kStatus) {
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
  std::vector<MdsRow> mds = (*client)->run(gather_mds(**client, ClusterMap(status->map()), per_mon));
  const auto& map = status->map();
  int up = 0, in = 0;
  HealthFacts facts;
  const uint64_t now_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  // Which daemons share a host: their addresses without the port. The OSDs also name
  // their CRUSH host, which is what people call the machine; an address whose OSDs have
  // different CRUSH hosts (one machine playing several, as on a development box) gets
  // no name.
  std::map<std::string, std::string> host_names;
  for (const auto& osd : map.osds()) {
    auto [it, first] = host_names.emplace(host_of_addr(osd.addr()), osd.host());
    if (!first && it->second != osd.host()) it->second.clear();
  }
  auto note_daemon = [&](const std::string& name, const std::string& addr, bool silent,
                         uint64_t down_for_ms, const std::string& crush_host = "",
                         bool out = false) {
    const std::string host = host_of_addr(addr);
    facts.daemon_hosts.emplace_back(name, host);
    if (silent) {
      facts.silent.push_back(
          {name, host, crush_host.empty() ? host_names[host] : crush_host, down_for_ms, out});
    }
  };
  for (const auto& osd : map.osds()) {
    up += osd.up();
    in += osd.in();
    uint64_t since = osd.down_since_ms();
    note_daemon("osd." + std::to_string(osd.id()), osd.addr(), !osd.up(),
                !osd.up() && since && since < now_ms ? now_ms - since : 0, osd.host(), !osd.in());
    if (osd.space() == proto::SPACE_FULL) {
      facts.full_osds.push_back(fmt::format(
          "osd.{} on {} is full ({}% used): writes to its placement groups fail with ENOSPC; "
          "delete data or add OSDs",
          osd.id(), osd.host(), osd.used_permille() / 10));
    } else if (osd.space() == proto::SPACE_NEARFULL) {
      facts.nearfull_osds.push_back(fmt::format("osd.{} on {} is nearly full ({}% used): add "
                                                "OSDs or delete data before it fills",
                                                osd.id(), osd.host(), osd.used_permille() / 10));
    }
  }
  facts.osds_up = up;
  for (const auto& pool : map.pools()) {
    if (static_cast<int>(pool.min_size()) > up) {
      facts.pools_below_min_size.push_back({pool.name(), pool.min_size()});
    }
  }
  for (const auto& m : quorum.mons) note_daemon(m.name, m.addr, !m.reachable, 0);
  facts.mon_leader = !quorum.leader.empty();
  std::set<uint32_t> ranks, served;
  for (const auto& m : mds) {
    ranks.insert(m.rank);
    if (m.active) served.insert(m.rank);
    note_daemon(m.name, m.addr, !m.error.empty(), 0);
  }
  for (uint32_t rank : ranks) {
    if (!served.count(rank)) facts.ranks_without_mds.push_back(rank);
  }
  std::vector<capacity::OsdSpace> spaces;
  PgView pgs;
  uint64_t recovered = 0;
  const ClusterMap current(map);
  for (const auto& pool : map.pools()) {
    pgs.total += pool.pg_num();
    for (uint32_t pg = 0; pg < pool.pg_num(); ++pg) {
      pgs.degraded += current.acting(pool, pg).size() < pool.size();
    }
  }
  for (const auto& osd : map.osds()) {
    if (!osd.up()) continue;
    auto df = (*client)->run((*client)->osd_statfs(osd.id()));
    if (!df) continue;
    pgs.active += df->pgs_active();
    pgs.pending += df->recovery_pending_objects();
    recovered += df->recovered_objects();
    spaces.push_back(capacity::space_of(osd.id(), *df));
    if (df->inconsistent_objects() > df->repaired_objects()) {
      facts.unrepaired.push_back(fmt::format(
          "osd.{} found {} inconsistent objects it could not repair (see its log; "
          "`dfs pg deep-scrub POOL` tries again)",
          osd.id(), df->inconsistent_objects() - df->repaired_objects()));
    }
  }
  if (pgs.pending > 0) {
    // A second sample for the rate: what peering moved in one second.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    uint64_t later = 0;
    for (const auto& osd : map.osds()) {
      if (!osd.up()) continue;
      auto df = (*client)->run((*client)->osd_statfs(osd.id()));
      if (df) later += df->recovered_objects();
    }
    pgs.rate = later >= recovered ? static_cast<double>(later - recovered) : 0;
  }
  const capacity::ClusterSpace cap = capacity::sum_space(spaces);
  facts.pgs_total = pgs.total;
  facts.pgs_active = pgs.active;
  facts.pgs_degraded = pgs.degraded;
  facts.objects_to_recover = pgs.pending;
  facts.recovery_objects_per_s = pgs.rate;
  facts.evictions = evictions_of(map);
  facts.now_ms = now_ms;
  const Health health = judge_health(facts);
  if (view != View::kStatus) {
    // `dfs health`: the verdict and a count; `dfs health detail`: every problem too.
    fmt::print("{}", severity_name(health.overall));
    if (view == View::kHealth && !health.items.empty()) {
      fmt::print(": {} problem{} (dfs health detail)", health.items.size(),
                 health.items.size() == 1 ? "" : "s");
    } else if (view == View::kHealth && !health.notes.empty()) {
      fmt::print(": {} note{} (dfs health detail)", health.notes.size(),
                 health.notes.size() == 1 ? "" : "s");
    }
    fmt::print("\n");
    if (view == View::kHealthDetail) {
      for (const auto& item : health.items) fmt::print("  [{}] {}\n", severity_name(item.severity), item.text);
      for (const auto& note : health.notes) fmt::print("  [note] {}\n", note);
    }
    return health.overall == Severity::kOk ? 0 : health.overall == Severity::kWarn ? 1 : 2;
  }
  if (format == "json") {
    print_json(*status, quorum, mds, health, up, in, cap, pgs, now_ms);
    return 0;
  }
  fmt::print("cluster {}\n", map.fsid());
  fmt::print("  health:   {}\n", severity_name(health.overall));
  for (const auto& item : health.items) {
    fmt::print("            {}{}\n", item.severity == Severity::kErr ? "ERR: " : "", item.text);
  }
  for (const auto& note : health.notes) fmt::print("            note: {}\n", note);
  fmt::print("  monitor:  {} (up {} s), map epoch {}\n", status->mon_entity(), status->uptime_s(),
             map.epoch());
  print_quorum_text(quorum);
  print_mds_text(mds);
  fmt::print("  osds:     {} total, {} up, {} in\n", map.osds_size(), up, in);
  // Up per host: a dead host shows as 0/N at a glance.
  std::map<std::string, std::pair<int, int>> by_host;  // host -> (up, total)
  for (const auto& osd : map.osds()) {
    by_host[osd.host()].first += osd.up();
    ++by_host[osd.host()].second;
  }
  std::string hosts_line;
  for (const auto& [host, counts] : by_host) {
    hosts_line += fmt::format("{}{} {}/{} up", hosts_line.empty() ? "" : ", ", host,
                              counts.first, counts.second);
  }
  if (!hosts_line.empty()) fmt::print("            {}\n", hosts_line);
  fmt::print("  pools:    {}\n", map.pools_size());
  fmt::print("  pgs:      {} total, {} active, {} degraded\n", pgs.total, pgs.active, pgs.degraded);
  if (pgs.active < pgs.total || pgs.pending > 0) {
    std::string eta = pgs.rate > 0 ? fmt::format("ETA {:.0f} s", pgs.pending / pgs.rate) : "ETA unknown";
    fmt::print("  recovery: {} {}/{} PGs active; {} objects to copy at {:.0f} objects/s, {}\n",
               progress_bar(pgs.active, pgs.total), pgs.active, pgs.total, pgs.pending, pgs.rate,
               eta);
  }
  const std::string sharing = cap.sharing();
  fmt::print("  capacity: {:.1f} GiB used of {:.1f} GiB raw on up OSDs{}; {} object replicas\n",
             cap.used_bytes / double(1ull << 30), cap.total_bytes / double(1ull << 30),
             sharing.empty() ? "" : " (" + sharing + ")", cap.objects);
  return 0;
}

// `dfs df`: raw capacity per OSD (as each reports its disk), the cluster's with each disk
// counted once, and what the pools can hold.
int print_df(const GlobalOptions& global) {
  auto client = connect_client(global);
  if (!client) return report("df", client.error());
  ClusterMap map = (*client)->map_snapshot();
  auto gib = [](uint64_t b) { return b / double(1ull << 30); };
  auto percent = [](uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; };
  // Ask every up OSD first: the DEVICE column numbers the disks they turn out to share.
  std::vector<capacity::OsdSpace> spaces;
  std::map<int32_t, std::string> unanswered;  // OSD id -> why
  for (const auto& osd : map.proto().osds()) {
    if (!osd.up()) continue;
    auto df = (*client)->run((*client)->osd_statfs(osd.id()));
    if (df) {
      spaces.push_back(capacity::space_of(osd.id(), *df));
    } else {
      unanswered[osd.id()] = df.error().to_string();
    }
  }
  const capacity::ClusterSpace cap = capacity::sum_space(spaces);
  fmt::print("{:<8} {:<12} {:>10} {:>10} {:>6} {:>10}  {}\n", "OSD", "HOST", "SIZE GiB", "USED GiB",
             "USE%", "OBJECTS", "DEVICE");
  for (const auto& osd : map.proto().osds()) {
    const std::string name = "osd." + std::to_string(osd.id());
    if (!osd.up()) {
      fmt::print("{:<8} {:<12} {:>10}\n", name, osd.host(), "down");
      continue;
    }
    if (auto why = unanswered.find(osd.id()); why != unanswered.end()) {
      fmt::print("{:<8} {:<12} {:>10} {}\n", name, osd.host(), "?", why->second);
      continue;
    }
    auto space = std::find_if(spaces.begin(), spaces.end(),
                              [&](const capacity::OsdSpace& s) { return s.osd == osd.id(); });
    fmt::print("{:<8} {:<12} {:>10.1f} {:>10.1f} {:>5.0f}% {:>10}  #{} {}\n", name, osd.host(),
               gib(space->total_bytes), gib(space->used_bytes),
               percent(space->used_bytes, space->total_bytes), space->objects,
               cap.device_number_of(osd.id()), space->device_name);
  }
  fmt::print("{:<21} {:>10.1f} {:>10.1f} {:>5.0f}% {:>10}\n", "raw, up OSDs", gib(cap.total_bytes),
             gib(cap.used_bytes), percent(cap.used_bytes, cap.total_bytes), cap.objects);
  if (const std::string sharing = cap.sharing(); !sharing.empty()) {
    fmt::print("{}: a shared device's size and use count once in the raw line\n", sharing);
  }
  fmt::print("\n{:<12} {:>6} {:>10}\n", "POOL", "COPIES", "FREE GiB");
  for (const auto& pool : map.proto().pools()) {
    // Each byte stored takes `size` raw bytes; no more than the full ratio is usable.
    double free = cap.total_bytes > cap.used_bytes
                      ? gib(cap.total_bytes - cap.used_bytes) / std::max(pool.size(), 1u)
                      : 0;
    fmt::print("{:<12} {:>6} {:>10.1f}\n", pool.name(), pool.size(), free);
  }
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

  auto* health = app.add_subcommand(
      "health", "OK, WARN or ERR, with a count of problems; exit status 0, 1 or 2");
  health->add_subcommand("detail", "each problem in words, worst first")
      ->callback([&] { exit_code = print_status(global, "text", View::kHealthDetail); });
  health->callback([&global, &exit_code, health] {
    if (health->get_subcommands().empty()) exit_code = print_status(global, "text", View::kHealth);
  });
  app.add_subcommand("df", "capacity: each OSD's disk, and what each pool can still hold")
      ->callback([&] { exit_code = print_df(global); });
}

void add_osd_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* osd = app.add_subcommand("osd", "inspect and manage OSDs");
  osd->require_subcommand(1);
  osd->add_subcommand("tree", "show hosts and their OSDs with weight and state")
      ->callback([&] { exit_code = print_osd_tree(global); });
  static int id = -1;
  static double weight = 1.0;
  for (auto [verb, help] :
       {std::pair{"out", "mark an OSD out (CRUSH stops placing data on it)"},
        std::pair{"in", "mark an OSD back in"},
        std::pair{"down", "mark an OSD down (it re-announces itself if alive)"},
        std::pair{"reweight", "set an OSD's CRUSH weight (its share of the data; conventionally TiB)"},
        std::pair{"purge", "remove a down and out OSD from the map for good (its disk is gone)"}}) {
    auto* cmd = osd->add_subcommand(verb, help);
    cmd->add_option("id", id, "OSD id")->required();
    if (std::string(verb) == "reweight") {
      cmd->add_option("weight", weight, "new CRUSH weight (>= 0)")->required()->check(CLI::NonNegativeNumber);
    }
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
      if (verb == "reweight") {
        command.mutable_set_weight()->set_id(id);
        command.mutable_set_weight()->set_weight(weight);
      }
      if (verb == "purge") command.mutable_purge_osd()->set_id(id);
      auto epoch = (*client)->run((*client)->mon_command(command));
      if (!epoch) {
        exit_code = report("osd " + verb, epoch.error());
        return;
      }
      if (verb == "reweight") {
        fmt::print("osd.{} weighs {} (map epoch {}); its PGs move accordingly\n", id, weight, *epoch);
      } else if (verb == "purge") {
        fmt::print("removed osd.{} from the map (map epoch {})\n", id, *epoch);
      } else {
        fmt::print("marked osd.{} {} (map epoch {})\n", id, verb, *epoch);
      }
    });
  }
}

}  // namespace dfs::cli
