// Scrub and repair: a PG's members are compared object by object, and an object a
// member holds differently, or cannot read, is made whole again from a good copy.
//
// A scrub lists every member: versions and sizes; a deep scrub also reads every object
// through the store's block checksums and compares crc32c digests of the data, so a
// flipped bit on one disk shows as a damaged copy there. Listings are taken while
// writes go on, so a difference only makes an object suspect: each suspect is looked
// at again under its object lock (which a write holds until every replica has it), by
// reading every member's whole copy. The good copy is the newest version among the
// copies that read back; when several copies of that version differ, the most common
// content wins (ties: the primary's). Every member that differs from it gets it
// (kOsdPush), as peering copies objects.
//
// Triggers: `dfs pg scrub|deep-scrub` (kOsdPgScrub), a schedule (osd_scrub_interval,
// osd_deep_scrub_interval, one PG at a time), and a read that met a bad checksum in
// the primary's copy (served from a replica by read_path.cc, repaired here after).
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "common/rpc/methods.h"
#include "common/util/crc32c.h"
#include "osd/service/osd_service.h"

namespace dfs::osd {
namespace {

// Pause between two PGs of a scheduled scrub pass, so client I/O keeps the disk.
constexpr Duration kScrubPause{200};

std::string pg_name(uint32_t pool, uint32_t pg) {
  return std::to_string(pool) + "." + std::to_string(pg);
}

std::string version_text(const ObjectVersion& v) {
  return std::to_string(v.epoch) + "." + std::to_string(v.seq);
}

bool same_entry(const ScrubEntry& a, const ScrubEntry& b, bool deep) {
  return a.version == b.version && a.size == b.size && (!deep || a.digest == b.digest) &&
         a.damage.empty() && b.damage.empty();
}

// Index into `copies` of the good copy (see the file comment); nullopt when no member
// returned one. Absent objects (nullopt copies) count as good and oldest.
std::optional<size_t> choose_good_copy(const std::vector<Result<std::optional<ObjectCopy>>>& copies) {
  std::optional<size_t> newest;
  for (size_t i = 0; i < copies.size(); ++i) {
    if (!copies[i]) continue;
    if (!newest) {
      newest = i;
      continue;
    }
    const auto& best = *copies[*newest];
    const auto& here = *copies[i];
    if (here && (!best || best->version < here->version)) newest = i;
  }
  if (!newest || !*copies[*newest]) return newest;
  // Copies of the newest version: the most common content.
  const ObjectVersion v = (*copies[*newest])->version;
  size_t best = *newest, best_votes = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    if (!copies[i] || !*copies[i] || (*copies[i])->version != v) continue;
    size_t votes = 0;
    for (size_t j = 0; j < copies.size(); ++j) {
      if (copies[j] && *copies[j] && (*copies[j])->version == v &&
          (*copies[j])->data == (*copies[i])->data) {
        ++votes;
      }
    }
    if (votes > best_votes) {
      best = i;
      best_votes = votes;
    }
  }
  return best;
}

bool same_copy(const std::optional<ObjectCopy>& a, const std::optional<ObjectCopy>& b) {
  if (!a || !b) return !a && !b;
  return a->version == b->version && a->data == b->data;
}

}  // namespace

Result<std::map<std::string, ScrubEntry>> OsdService::scrub_listing_here(uint32_t pool,
                                                                         uint32_t pg, bool deep) {
  auto entries = DFS_TRY(store_->list(pool, pg));
  std::map<std::string, ScrubEntry> out;
  for (auto& [name, info] : entries) {
    ScrubEntry e{info.version, info.size, 0, ""};
    if (deep) {
      auto data = store_->read(ObjectKey{pool, pg, name}, 0, info.size);
      if (data) {
        e.digest = crc32c(*data);
      } else if (data.error().code() == ErrorCode::kNotFound) {
        continue;  // removed since the listing
      } else {
        e.damage = data.error().to_string();
      }
    }
    out.emplace(std::move(name), std::move(e));
  }
  return out;
}

awaitable<Result<std::map<std::string, ScrubEntry>>> OsdService::scrub_list_member(
    int32_t osd, uint32_t pool, uint32_t pg, bool deep) {
  using Listing = std::map<std::string, ScrubEntry>;
  if (osd == options_.id) {
    auto list = [this, pool, pg, deep] { return scrub_listing_here(pool, pg, deep); };
    co_return co_await run_blocking(blocking_, std::move(list));
  }
  std::string addr = DFS_CO_TRY(member_addr(osd));
  proto::ListRequest request;
  request.set_pool(pool);
  request.set_pg(pg);
  request.set_epoch(map().epoch());
  request.set_any_replica(true);
  request.set_deep(deep);
  // A deep listing reads the member's whole PG: allow it the time that takes.
  DFS_CO_AWAIT_TRY(auto reply, messenger_.call_proto<proto::ListReply>(
                                   addr, rpc::kOsdList, request, options_.replica_timeout * 12));
  Listing out;
  for (const auto& e : reply.entries()) {
    out.emplace(e.name(), ScrubEntry{ObjectVersion{e.version().epoch(), e.version().seq()},
                                     e.size(), e.digest(), e.damage()});
  }
  co_return out;
}

awaitable<Result<std::optional<RepairFinding>>> OsdService::repair_object(ObjectKey key) {
  auto guard = co_await locks_.lock(std::to_string(key.pool) + "/" + key.name);
  const auto* pool = map().pool(static_cast<int32_t>(key.pool));
  if (!pool) co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(key.pool));
  auto acting = map().acting(*pool, key.pg);
  if (acting.empty() || acting.front() != options_.id) {
    co_return make_error(ErrorCode::kNotPrimary, "no longer the primary of pg " + pg_name(key.pool, key.pg));
  }
  std::vector<Result<std::optional<ObjectCopy>>> copies;
  for (int32_t osd : acting) copies.push_back(co_await fetch_copy(osd, key));

  auto good = choose_good_copy(copies);
  if (!good) {
    ++inconsistent_objects_;
    co_return RepairFinding{key.name + ": no member holds a readable copy (" +
                                copies.front().error().to_string() + "); not repaired",
                            false};
  }
  std::string finding;
  size_t repaired = 0, left = 0;
  for (size_t i = 0; i < acting.size(); ++i) {
    if (copies[i] && same_copy(*copies[i], *copies[*good])) continue;
    std::string what;
    if (!copies[i]) {
      if (copies[i].error().code() != ErrorCode::kCorruption) {
        // Unreachable or failing otherwise: not a finding about its data.
        what = "not compared (" + copies[i].error().to_string() + ")";
        finding += (finding.empty() ? "" : "; ") + key.name + " on osd." + std::to_string(acting[i]) + ": " + what;
        ++left;
        continue;
      }
      what = copies[i].error().to_string();
    } else if (!*copies[i]) {
      what = "missing";
    } else if (!*copies[*good]) {
      what = "present but removed on the others";
    } else if ((*copies[i])->version != (*copies[*good])->version) {
      what = "version " + version_text((*copies[i])->version) + " instead of " +
             version_text((*copies[*good])->version);
    } else {
      what = "different data at the same version";
    }
    std::optional<ObjectCopy> pushed = *copies[*good];  // named: see peering.cc
    Status done = co_await push_copy(acting[i], key, std::move(pushed));
    finding += (finding.empty() ? "" : "; ") + key.name + " on osd." + std::to_string(acting[i]) +
               ": " + what;
    if (done) {
      finding += "; repaired from osd." + std::to_string(acting[*good]);
      ++repaired;
    } else {
      finding += "; repair failed: " + done.error().to_string();
      ++left;
    }
  }
  if (finding.empty()) co_return std::optional<RepairFinding>();  // consistent after all
  ++inconsistent_objects_;
  if (left == 0) ++repaired_objects_;
  if (left > 0) finding += " (not repaired)";
  spdlog::warn("{}: pg {}: {}", entity_, pg_name(key.pool, key.pg), finding);
  co_return RepairFinding{std::move(finding), left == 0};
}

awaitable<Result<proto::PgScrubReply>> OsdService::scrub_pg(uint32_t pool_id, uint32_t pg_id,
                                                            bool deep) {
  {
    // Only a peered PG is scrubbed: peering settles what an interval change left.
    DFS_CO_AWAIT_TRY(auto admitted, admit(pool_id, pg_id));
  }
  const auto* pool = map().pool(static_cast<int32_t>(pool_id));
  if (!pool) co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(pool_id));
  auto acting = map().acting(*pool, pg_id);
  std::vector<std::map<std::string, ScrubEntry>> listings;
  for (int32_t osd : acting) {
    auto listing = co_await scrub_list_member(osd, pool_id, pg_id, deep);
    if (!listing) {
      co_return unexpected(std::move(listing).error().with_context(
          "scrubbing pg " + pg_name(pool_id, pg_id) + ": listing osd." + std::to_string(osd)));
    }
    listings.push_back(std::move(*listing));
  }
  std::set<std::string> names, suspects;
  for (const auto& listing : listings) {
    for (const auto& [name, entry] : listing) names.insert(name);
  }
  for (const auto& name : names) {
    const ScrubEntry* first = nullptr;
    for (const auto& listing : listings) {
      auto it = listing.find(name);
      if (it == listing.end() || !it->second.damage.empty() ||
          (first && !same_entry(*first, it->second, deep))) {
        suspects.insert(name);
        break;
      }
      first = &it->second;
    }
  }
  proto::PgScrubReply reply;
  reply.set_objects(names.size());
  for (const auto& name : suspects) {
    ObjectKey key{pool_id, pg_id, name};
    auto finding = co_await repair_object(key);
    if (!finding) {
      co_return unexpected(std::move(finding).error().with_context(
          "scrubbing pg " + pg_name(pool_id, pg_id) + ": " + name));
    }
    if (!*finding) continue;  // a write was under way: consistent under the lock
    reply.set_inconsistent(reply.inconsistent() + 1);
    if ((*finding)->repaired) reply.set_repaired(reply.repaired() + 1);
    reply.add_findings(std::move((*finding)->text));
  }
  spdlog::info("{}: pg {} {}scrubbed: {} objects, {} inconsistent, {} repaired", entity_,
               pg_name(pool_id, pg_id), deep ? "deep-" : "", reply.objects(), reply.inconsistent(),
               reply.repaired());
  co_return reply;
}

awaitable<Result<rpc::Reply>> OsdService::on_pg_scrub(rpc::ConnectionPtr, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::PgScrubRequest>(frame.body));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY(locate_pg(request.pool(), request.pg()));
  DFS_CO_AWAIT_TRY(auto reply, scrub_pg(request.pool(), request.pg(), request.deep()));
  co_return rpc::make_reply(reply);
}

void OsdService::repair_after_read(ObjectKey key) {
  spawn_checked(executor_, [](OsdService* self, ObjectKey k) -> awaitable<void> {
    auto finding = co_await self->repair_object(k);
    if (!finding) {
      spdlog::warn("{}: repairing {} of pg {}.{} after a bad read: {}", self->entity_, k.name,
                   k.pool, k.pg, finding.error().to_string());
    }
  }(this, std::move(key)));
}

awaitable<void> OsdService::scrub_loop() {
  const Duration shallow = options_.scrub_interval, deep = options_.deep_scrub_interval;
  if (shallow.count() == 0 && deep.count() == 0) co_return;
  // Checks for due PGs this often; a PG first seen counts as scrubbed then, so a
  // restart does not scrub everything at once.
  Duration check = std::min(shallow.count() ? shallow : deep, deep.count() ? deep : shallow);
  check = std::clamp(check / 4, Duration(100), Duration(60000));
  struct Last {
    Clock::time_point scrub, deep;
  };
  std::map<PgKey, Last> last;
  for (;;) {
    co_await sleep_for(check);
    const std::vector<PgKey> mine = primary_pgs();
    for (const auto& key : mine) {
      auto now = Clock::now();
      auto [it, fresh] = last.try_emplace(key, Last{now, now});
      if (fresh) continue;
      bool deep_due = deep.count() > 0 && now - it->second.deep >= deep;
      bool due = deep_due || (shallow.count() > 0 && now - it->second.scrub >= shallow);
      if (!due) continue;
      auto scrubbed = co_await scrub_pg(key.first, key.second, deep_due);
      if (!scrubbed) {
        spdlog::info("{}: scheduled scrub of pg {}: {}", entity_, pg_name(key.first, key.second),
                     scrubbed.error().to_string());
        continue;  // due again at the next check
      }
      it->second.scrub = Clock::now();
      if (deep_due) it->second.deep = it->second.scrub;
      co_await sleep_for(kScrubPause);
    }
  }
}

}  // namespace dfs::osd
