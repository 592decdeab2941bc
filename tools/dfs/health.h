// The health verdict of `dfs status` and `dfs health`: what is wrong, in words an
// operator can act on, and how bad it is. Pure: status_cmd.cc gathers the facts (map,
// quorum, MDS replies, OSD statfs), this decides what they mean, so that the wording is
// tested without a cluster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dfs::cli {

enum class Severity { kOk, kWarn, kErr };
const char* severity_name(Severity s);  // "OK", "WARN", "ERR"

// One daemon that does not answer (an OSD the map has down, an unreachable monitor or
// MDS), with the host it runs on.
struct SilentDaemon {
  std::string name;       // "osd.1", "mon.dfs2"
  std::string host;       // its address without the port: daemons sharing it share a host
  std::string host_name;  // the OSD's CRUSH host, when known ("dfs2"), else empty
  uint64_t down_for_ms = 0;  // how long, when known (OSDs); 0: unknown
  bool out = false;  // OSDs only: marked out, so CRUSH has given its PGs to other OSDs
  bool is_osd() const { return name.rfind("osd.", 0) == 0; }
};

// A client session the MDS evicted and the monitors fenced (the map's fenced_clients).
struct ClientEviction {
  std::string entity;  // "client.admin.ab12cd"
  uint64_t at_ms = 0;  // wall clock, the evicting MDS's
  std::string reason;
  uint64_t epoch = 0;  // the map epoch that fenced it
};

// How long an eviction is worth a warning: long enough to be seen by whoever looks at
// the cluster after the fact, short enough that it does not hide new problems all day.
constexpr uint64_t kRecentEvictionMs = 3600'000;

struct HealthFacts {
  std::vector<SilentDaemon> silent;
  // Every daemon's host address (silent or not): a host is down when all of its are silent.
  std::vector<std::pair<std::string, std::string>> daemon_hosts;  // (name, host address)
  bool mon_leader = true;
  std::vector<uint32_t> ranks_without_mds;
  struct Pool { std::string name; uint32_t min_size = 0; };
  std::vector<Pool> pools_below_min_size;  // fewer OSDs up than min_size: writes block
  int osds_up = 0;
  std::vector<std::string> full_osds;      // "osd.2 on dfs3 is full (96% used)"
  std::vector<std::string> nearfull_osds;
  std::vector<std::string> unrepaired;     // inconsistent objects an OSD could not repair
  // pgs_active: PGs whose primary answered and has peered them for their acting set;
  // pgs_degraded: PGs with fewer OSDs up in their acting set than their pool's size.
  uint32_t pgs_total = 0, pgs_active = 0, pgs_degraded = 0;
  uint64_t objects_to_recover = 0;
  double recovery_objects_per_s = 0;
  // Every fence of the map; those younger than kRecentEvictionMs before `now_ms` warn.
  std::vector<ClientEviction> evictions;
  uint64_t now_ms = 0;

  // Every PG holds its pool's number of copies: all active (a full acting set agrees
  // object by object), none degraded, nothing left to copy. Only then may a down OSD
  // that is out be called harmless: its data lives on the OSDs that took its PGs.
  bool pgs_whole() const;
};

struct HealthItem {
  Severity severity;
  std::string text;
};

struct Health {
  Severity overall = Severity::kOk;  // the worst item's; notes never change it
  std::vector<HealthItem> items;     // problems, worst first
  // Facts worth knowing that need no action (a dead OSD whose data has been re-copied
  // elsewhere): said, but the cluster is as safe as its pools promise.
  std::vector<std::string> notes;
};

Health judge_health(const HealthFacts& facts);

// "12 s", "3 min", "2 h 5 min", "4 days".
std::string format_age(uint64_t ms);

// How long before `now_ms` a fence was set; 0 for one the MDS's clock puts in the future.
uint64_t eviction_age_ms(const ClientEviction& e, uint64_t now_ms);

}  // namespace dfs::cli
