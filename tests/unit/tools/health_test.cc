// The words of `dfs status`: a dead host is said once, with how long; what stops I/O is
// an error, what runs on fewer copies a warning, and a dead OSD whose data has been
// copied elsewhere only a note. A client evicted in the last hour is a warning.
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

bool has_note(const Health& h, const std::string& text) {
  for (const auto& note : h.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

// Whether any item or note says `text`, whatever its severity.
bool says(const Health& h, const std::string& text) {
  for (const auto& item : h.items) {
    if (item.text.find(text) != std::string::npos) return true;
  }
  return has_note(h, text);
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

// Four OSDs on their own hosts (as a dev cluster has them), osd.3 dead for 109 s.
HealthFacts osd3_dead(bool out) {
  HealthFacts f = three_hosts();
  f.daemon_hosts.emplace_back("osd.3", "10.0.0.4");
  f.silent = {{"osd.3", "10.0.0.4", "dfs4", 109'000, out}};
  f.osds_up = 4;
  return f;
}

TEST_CASE("health: a down OSD that is still in runs its PGs on fewer copies") {
  HealthFacts f = osd3_dead(/*out=*/false);
  f.pgs_degraded = 40;
  Health h = judge_health(f);
  CHECK(h.overall == Severity::kWarn);
  CHECK(has(h, Severity::kWarn, "osd.3 on dfs4 is down for 109 s: its placement groups run on "
                                "fewer copies"));
  CHECK(h.notes.empty());
}

TEST_CASE("health: a down OSD that is out, its PGs whole again, is a note and the cluster OK") {
  HealthFacts f = osd3_dead(/*out=*/true);
  REQUIRE(f.pgs_whole());
  Health h = judge_health(f);
  CHECK(h.overall == Severity::kOk);
  CHECK(h.items.empty());
  CHECK(has_note(h, "osd.3 on dfs4 is down and out for 109 s: its data has been re-replicated"));
  CHECK_FALSE(says(h, "fewer copies"));
}

TEST_CASE("health: a down OSD that is out stays a warning until recovery has finished") {
  SUBCASE("PGs being backfilled onto the OSDs that took its place") {
    HealthFacts f = osd3_dead(/*out=*/true);
    f.pgs_active = 50;
    f.objects_to_recover = 300;
    Health h = judge_health(f);
    CHECK(h.overall == Severity::kWarn);
    CHECK(has(h, Severity::kWarn, "osd.3 on dfs4 is down and out for 109 s: its placement groups "
                                  "are not yet whole on other OSDs (0 degraded, 14 of 64 not active)"));
    CHECK(h.notes.empty());
  }
  SUBCASE("no OSD left to take its copies: PGs stay degraded") {
    HealthFacts f = osd3_dead(/*out=*/true);
    f.pgs_degraded = 64;
    Health h = judge_health(f);
    CHECK(h.overall == Severity::kWarn);
    CHECK(has(h, Severity::kWarn, "(64 degraded, 0 of 64 not active)"));
    CHECK(h.notes.empty());
  }
}

TEST_CASE("health: PGs are whole only when all are active, none degraded, nothing to copy") {
  HealthFacts f = three_hosts();
  CHECK(f.pgs_whole());
  f.pgs_active = 63;
  CHECK_FALSE(f.pgs_whole());
  f.pgs_active = 64;
  f.pgs_degraded = 1;
  CHECK_FALSE(f.pgs_whole());
  f.pgs_degraded = 0;
  f.objects_to_recover = 1;
  CHECK_FALSE(f.pgs_whole());
}

TEST_CASE("health: a dead host whose OSDs are out and re-replicated claims no fewer copies") {
  HealthFacts f = three_hosts();
  f.osds_up = 2;
  f.silent = {{"osd.1", "10.0.0.2", "dfs2", 700'000, true},
              {"mon.dfs2", "10.0.0.2", "dfs2", 0},
              {"mds.dfs2", "10.0.0.2", "dfs2", 0}};
  SUBCASE("its monitor and MDS replica are missed: a warning") {
    Health h = judge_health(f);
    CHECK(h.overall == Severity::kWarn);
    CHECK(has(h, Severity::kWarn, "host dfs2 (10.0.0.2) is down or cut off for 11 min"));
    CHECK(has(h, Severity::kWarn, "Its OSDs are out and their data has been re-replicated"));
    CHECK_FALSE(says(h, "fewer copies"));
  }
  SUBCASE("a host of OSDs only: a note") {
    f.daemon_hosts = {{"osd.0", "10.0.0.1"}, {"osd.1", "10.0.0.2"}, {"osd.2", "10.0.0.2"},
                      {"osd.3", "10.0.0.3"}, {"osd.4", "10.0.0.4"}};
    f.silent = {{"osd.1", "10.0.0.2", "dfs2", 700'000, true},
                {"osd.2", "10.0.0.2", "dfs2", 700'000, true}};
    Health h = judge_health(f);
    CHECK(h.overall == Severity::kOk);
    CHECK(h.items.empty());
    CHECK(has_note(h, "host 10.0.0.2 is down or cut off for 11 min: osd.1 and osd.2 do not answer"));
  }
  SUBCASE("one of its OSDs still in: fewer copies") {
    f.silent[0].out = false;
    f.pgs_degraded = 30;
    Health h = judge_health(f);
    CHECK(has(h, Severity::kWarn, "The others carry on with fewer copies"));
  }
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

TEST_CASE("health: a client evicted in the last hour is a warning with when and why") {
  HealthFacts f = three_hosts();
  f.now_ms = 1'800'000'000'000;
  f.evictions = {{"client.admin.ab12cd", f.now_ms - 185'000,
                  "did not renew its session for 31 s (session timeout 30 s)", 57},
                 {"client.backup.77", f.now_ms - 2 * 3600'000, "evicted by an operator", 40}};
  Health h = judge_health(f);
  CHECK(h.overall == Severity::kWarn);
  REQUIRE(h.items.size() == 1);  // the one of two hours ago is only in the map (and JSON)
  CHECK(has(h, Severity::kWarn,
            "client.admin.ab12cd was evicted 3 min ago: did not renew its session for 31 s "
            "(session timeout 30 s). Fenced at map epoch 57: its requests are refused"));
  CHECK_FALSE(says(h, "client.backup.77"));
}

TEST_CASE("health: evictions are listed newest first, a burst is capped") {
  HealthFacts f = three_hosts();
  f.now_ms = 1'800'000'000'000;
  for (int i = 0; i < 7; ++i) {
    f.evictions.push_back({"client.m." + std::to_string(i), f.now_ms - 60'000 * (i + 1), "r", 10});
  }
  // An MDS clock ahead of ours: "0 s ago", still recent, not an underflow.
  f.evictions.push_back({"client.ahead.1", f.now_ms + 5'000, "r", 11});
  Health h = judge_health(f);
  REQUIRE(h.items.size() == 6);
  CHECK(h.items[0].text.rfind("client.ahead.1 was evicted 0 s ago", 0) == 0);
  CHECK(h.items[1].text.rfind("client.m.0 was evicted 60 s ago", 0) == 0);
  CHECK(has(h, Severity::kWarn, "3 more clients were evicted in the last hour"));
}

TEST_CASE("health: an eviction stops warning after an hour") {
  HealthFacts f = three_hosts();
  f.now_ms = 1'800'000'000'000;
  f.evictions = {{"client.admin.ab12cd", f.now_ms - kRecentEvictionMs, "r", 57}};
  CHECK(judge_health(f).overall == Severity::kOk);
  f.evictions[0].at_ms += 1;
  CHECK(judge_health(f).overall == Severity::kWarn);
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
