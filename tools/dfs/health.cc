#include "tools/dfs/health.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace dfs::cli {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

std::string down_for(uint64_t ms) { return ms ? " for " + format_age(ms) : ""; }

// One down OSD on a host whose other daemons answer. Whether its data runs on fewer
// copies is read from the PG counts, not assumed: once it is out and every PG is whole
// again, the copies it held live on other OSDs and it is only a note.
void add_osd_down(Health& h, const SilentDaemon& d, const HealthFacts& f) {
  const std::string where = d.host_name.empty() ? d.host : d.host_name;
  if (!d.out) {
    h.items.push_back(
        {Severity::kWarn,
         f.pgs_degraded > 0
             ? fmt::format("{} on {} is down{}: its placement groups run on fewer copies until "
                           "it returns or is marked out",
                           d.name, where, down_for(d.down_for_ms))
             : fmt::format("{} on {} is down{} (still in; no placement group is degraded)",
                           d.name, where, down_for(d.down_for_ms))});
    return;
  }
  if (f.pgs_whole()) {
    h.notes.push_back(fmt::format("{} on {} is down and out{}: its data has been re-replicated "
                                  "on other OSDs (`dfs osd purge {}` once it is gone for good)",
                                  d.name, where, down_for(d.down_for_ms), d.name.substr(4)));
    return;
  }
  h.items.push_back(
      {Severity::kWarn,
       fmt::format("{} on {} is down and out{}: its placement groups are not yet whole on other "
                   "OSDs ({} degraded, {} of {} not active)",
                   d.name, where, down_for(d.down_for_ms), f.pgs_degraded,
                   f.pgs_total - std::min(f.pgs_active, f.pgs_total), f.pgs_total)});
}

// A host whose every daemon is silent, said once. Its OSDs' data is described as for a
// single OSD: on fewer copies unless they are all out and every PG is whole again. The
// host is only a note when nothing but such OSDs ran on it; a silent monitor or MDS
// replica leaves its group with less margin, which is worth a warning.
void add_host_down(Health& h, const std::string& host,
                   const std::vector<const SilentDaemon*>& silent, bool pgs_whole) {
  std::string label;
  uint64_t longest = 0;
  std::vector<std::string> list;
  bool only_osds = true, osds_out = true, any_osd = false;
  for (const auto* d : silent) {
    if (!d->host_name.empty() && !d->is_osd()) label = d->host_name;
    longest = std::max(longest, d->down_for_ms);
    list.push_back(d->name);
    only_osds = only_osds && d->is_osd();
    any_osd = any_osd || d->is_osd();
    osds_out = osds_out && (!d->is_osd() || d->out);
  }
  const bool data_whole = any_osd && osds_out && pgs_whole;
  const std::string what = fmt::format(
      "host {} is down or cut off{}: {} do not answer", label.empty() ? host : label + " (" + host + ")",
      down_for(longest), join(list));
  if (data_whole && only_osds) {
    h.notes.push_back(what + ". Its OSDs are out and their data has been re-replicated on other hosts");
  } else if (data_whole) {
    h.items.push_back({Severity::kWarn,
                       what + ". Its OSDs are out and their data has been re-replicated on other "
                              "hosts; its other daemons' groups run with one member fewer: bring "
                              "the host back or remove it (docs/operations.md)"});
  } else {
    h.items.push_back({Severity::kWarn, what + ". The others carry on with fewer copies; bring the "
                                               "host back or replace it (docs/operations.md)"});
  }
}

// Evictions of the last hour, newest first, one warning each: a fenced mount lost the
// writes it had not sent, which someone should hear about even though the cluster is
// fine. A burst (a whole client host gone) is capped so it does not bury the rest.
void add_recent_evictions(Health& h, const HealthFacts& f) {
  constexpr size_t kMaxListed = 5;
  std::vector<const ClientEviction*> recent;
  for (const auto& e : f.evictions) {
    if (eviction_age_ms(e, f.now_ms) < kRecentEvictionMs) recent.push_back(&e);
  }
  std::stable_sort(recent.begin(), recent.end(),
                   [](const ClientEviction* a, const ClientEviction* b) { return a->at_ms > b->at_ms; });
  for (size_t i = 0; i < recent.size() && i < kMaxListed; ++i) {
    const auto& e = *recent[i];
    h.items.push_back(
        {Severity::kWarn,
         fmt::format("{} was evicted {} ago: {}. Fenced at map epoch {}: its requests are "
                     "refused, so writes it had not sent by then failed",
                     e.entity, format_age(eviction_age_ms(e, f.now_ms)),
                     e.reason.empty() ? "no reason given" : e.reason, e.epoch)});
  }
  if (recent.size() > kMaxListed) {
    h.items.push_back({Severity::kWarn,
                       fmt::format("{} more clients were evicted in the last hour (`dfs status "
                                   "--format json` lists them)",
                                   recent.size() - kMaxListed)});
  }
}

}  // namespace

uint64_t eviction_age_ms(const ClientEviction& e, uint64_t now_ms) {
  return now_ms > e.at_ms ? now_ms - e.at_ms : 0;
}

bool HealthFacts::pgs_whole() const {
  return pgs_active >= pgs_total && pgs_degraded == 0 && objects_to_recover == 0;
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kOk: return "OK";
    case Severity::kWarn: return "WARN";
    case Severity::kErr: return "ERR";
  }
  return "?";
}

std::string format_age(uint64_t ms) {
  uint64_t s = ms / 1000;
  if (s < 120) return fmt::format("{} s", s);
  if (s < 7200) return fmt::format("{} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{} h {} min", s / 3600, s % 3600 / 60);
  return fmt::format("{} days", s / 86400);
}

Health judge_health(const HealthFacts& f) {
  Health h;
  auto add = [&](Severity s, std::string text) { h.items.push_back({s, std::move(text)}); };

  if (!f.mon_leader) {
    add(Severity::kErr, "the monitors have no leader (no majority answers): map changes, "
                        "OSD failures and new mounts wait until one is elected");
  }
  for (uint32_t rank : f.ranks_without_mds) {
    add(Severity::kErr, fmt::format("metadata rank {} has no active MDS: file system requests "
                                    "wait (start an MDS of the rank, or see its log)", rank));
  }
  for (const auto& p : f.pools_below_min_size) {
    add(Severity::kErr, fmt::format("pool '{}' needs {} OSDs up to accept writes and {} are: "
                                    "writes to it wait", p.name, p.min_size, f.osds_up));
  }
  for (const auto& s : f.full_osds) add(Severity::kErr, s);

  // A host whose every daemon is silent is one problem (the host is down or cut off),
  // not three: say it once.
  std::map<std::string, int> daemons_on;
  for (const auto& [name, host] : f.daemon_hosts) ++daemons_on[host];
  std::map<std::string, std::vector<const SilentDaemon*>> silent_on;
  for (const auto& d : f.silent) silent_on[d.host].push_back(&d);
  for (const auto& [host, silent] : silent_on) {
    const bool whole_host = silent.size() >= 2 && static_cast<int>(silent.size()) == daemons_on[host];
    if (whole_host) {
      add_host_down(h, host, silent, f.pgs_whole());
      continue;
    }
    for (const auto* d : silent) {
      if (d->is_osd()) {
        add_osd_down(h, *d, f);
      } else {
        h.items.push_back({Severity::kWarn, fmt::format("{} at {} does not answer", d->name, host)});
      }
    }
  }
  for (const auto& s : f.unrepaired) add(Severity::kWarn, s);
  for (const auto& s : f.nearfull_osds) add(Severity::kWarn, s);
  if (f.pgs_degraded > 0) {
    add(Severity::kWarn,
        fmt::format("{} of {} placement groups ({}%) are degraded: fewer of their OSDs are up "
                    "than their pool keeps copies",
                    f.pgs_degraded, f.pgs_total, f.pgs_degraded * 100 / std::max(f.pgs_total, 1u)));
  }
  if (f.pgs_active < f.pgs_total) {
    std::string rate;
    if (f.objects_to_recover > 0) {
      rate = f.recovery_objects_per_s > 0
                 ? fmt::format("; {} objects to copy at {:.0f}/s, ETA {}", f.objects_to_recover,
                               f.recovery_objects_per_s,
                               format_age(static_cast<uint64_t>(
                                   f.objects_to_recover / f.recovery_objects_per_s * 1000)))
                 : fmt::format("; {} objects to copy", f.objects_to_recover);
    }
    add(Severity::kWarn, fmt::format("{} of {} placement groups are peering or recovering{}",
                                     f.pgs_total - f.pgs_active, f.pgs_total, rate));
  }
  add_recent_evictions(h, f);
  std::stable_sort(h.items.begin(), h.items.end(),
                   [](const HealthItem& a, const HealthItem& b) { return a.severity > b.severity; });
  for (const auto& item : h.items) h.overall = std::max(h.overall, item.severity);
  return h;
}

}  // namespace dfs::cli
