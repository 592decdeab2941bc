// The words of `dfs status`: a dead host is said once, with how long; what stops I/O is
// an error, what runs on fewer copies a warning.
#include <doctest/doctest.h>

#include "tools/dfs/health.h"

namespace dfs::cli {
namespace {

bool has(const Health& h, Severity s, const std::string& text) {
  for (const auto& item : h.items) {
    if (item.severity == s && item.text.find(text) != std::string::npos) return true;
  }
  return false;
}

HealthFacts three_hosts() {
  HealthFacts f;
  for (int i = 1; i <= 3; ++i) {
    std::string ip = "10.0.0." + std::to_string(i);
    for (std::string name : {"mon.dfs", "mds.dfs"}) f.daemon_hosts.emplace_back(name + std::to_string(i), ip);
    f.daemon_hosts.emplace_back("osd." + std::to_string(i - 1), ip);
  }
  f.osds_up = 3;
  f.pgs_total = f.pgs_active = 64;
  return f;
}

TEST_CASE("health: a healthy cluster is OK with nothing to say") {
  Health h = judge_health(three_hosts());
  CHECK(h.overall == Severity::kOk);
  CHECK(h.items.empty());
}

TEST_CASE("health: a whole host down is one line naming the host, its daemons and how long") {
  HealthFacts f = three_hosts();
  f.osds_up = 2;
  f.silent = {{"osd.1", "10.0.0.2", "dfs2", 185'000},
              {"mon.dfs2", "10.0.0.2", "dfs2", 0},
              {"mds.dfs2", "10.0.0.2", "dfs2", 0}};
  f.pgs_degraded = 64;
  Health h = judge_health(f);
  CHECK(h.overall == Severity::kWarn);
  CHECK(has(h, Severity::kWarn,
            "host dfs2 (10.0.0.2) is down or cut off for 3 min: osd.1, mon.dfs2 and mds.dfs2 "
            "do not answer"));
  CHECK(has(h, Severity::kWarn, "64 of 64 placement groups (100%) are degraded"));
  for (const auto& item : h.items) CHECK(item.text.find("osd.1 on") == std::string::npos);
}

TEST_CASE("health: one daemon down is named alone") {
  HealthFacts f = three_hosts();
  f.osds_up = 2;
  f.silent = {{"osd.1", "10.0.0.2", "dfs2", 12'000}};
  Health h = judge_health(f);
  CHECK(has(h, Severity::kWarn, "osd.1 on dfs2 is down for 12 s"));
  CHECK_FALSE(has(h, Severity::kWarn, "host dfs2"));
}

TEST_CASE("health: what stops I/O is an error and comes first") {
  HealthFacts f = three_hosts();
  f.osds_up = 1;
  f.pools_below_min_size = {{"data", 2}};
  f.mon_leader = false;
  f.ranks_without_mds = {0};
  f.nearfull_osds = {"osd.0 on dfs1 is nearly full (88% used)"};
  Health h = judge_health(f);
  CHECK(h.overall == Severity::kErr);
  CHECK(has(h, Severity::kErr, "pool 'data' needs 2 OSDs up to accept writes and 1 are"));
  CHECK(has(h, Severity::kErr, "the monitors have no leader"));
  CHECK(has(h, Severity::kErr, "metadata rank 0 has no active MDS"));
  CHECK(h.items.front().severity == Severity::kErr);
  CHECK(h.items.back().severity == Severity::kWarn);
}

TEST_CASE("health: recovery in progress shows its rate and ETA") {
  HealthFacts f = three_hosts();
  f.pgs_active = 60;
  f.objects_to_recover = 9000;
  f.recovery_objects_per_s = 50;
  Health h = judge_health(f);
  CHECK(has(h, Severity::kWarn, "4 of 64 placement groups are peering or recovering; 9000 objects "
                                "to copy at 50/s, ETA 3 min"));
}

TEST_CASE("format_age reads as a person would say it") {
  CHECK(format_age(0) == "0 s");
  CHECK(format_age(119'000) == "119 s");
  CHECK(format_age(185'000) == "3 min");
  CHECK(format_age(2 * 3600'000 + 5 * 60'000) == "2 h 5 min");
  CHECK(format_age(3 * 86400'000ull) == "3 days");
}

}  // namespace
}  // namespace dfs::cli
