// Peering and recovery: before a primary serves a PG for an acting set, every member
// holds the same objects at the same versions.
//
// The member whose PG log is newest (last_update) is authoritative: every write the
// PG acknowledged reached all members up at the time, and a member that missed writes
// while down is brought up to date here before the PG serves again, so the newest
// member holds every acknowledged write. The primary compares each member's listing
// (object, version) with the authoritative one and copies just the objects that
// differ: the whole object at its version (kOsdPush), or its removal. A restarted
// member that missed a few writes thus receives exactly those objects, an empty new
// member all of them (backfill). Ops admitted for the previous acting set finish
// first, and ops for the new one wait until the members agree (OsdService::admit).
// Proactively, after every map change the primary peers each of its PGs whose acting
// set changed, one PG at a time (the recovery throttle), so redundancy returns without
// client traffic.
#include <spdlog/spdlog.h>

#include <map>

#include "common/rpc/methods.h"
#include "osd/service/osd_service.h"

namespace dfs::osd {
namespace {

// How often peering looks whether the previous interval's ops have finished.
constexpr Duration kDrainPoll{1};
// After a failed pass (a member did not answer), the next one starts after this,
// unless a map change starts it sooner.
constexpr Duration kPeeringRetry{2000};

std::string pg_name(uint32_t pool, uint32_t pg) {
  return std::to_string(pool) + "." + std::to_string(pg);
}

std::string peer_lock_key(uint32_t pool, uint32_t pg) { return "peer/" + pg_name(pool, pg); }

proto::ObjectLocator locator(uint32_t pool, uint32_t pg, const std::string& name) {
  proto::ObjectLocator object;
  object.set_pool(pool);
  object.set_pg(pg);
  object.set_name(name);
  return object;
}

bool same_version(const ObjectVersion& a, const ObjectVersion& b) {
  return a.epoch == b.epoch && a.seq == b.seq;
}

// The store transaction that makes an object exactly this copy, or removes it.
Transaction push_transaction(const ObjectKey& key, const std::optional<ObjectCopy>& copy) {
  Transaction txn;
  if (!copy) {
    txn.remove(key);
    return txn;
  }
  txn.truncate(key, 0);
  if (!copy->data.empty()) txn.write(key, 0, copy->data);
  txn.set_version(key, copy->version);
  return txn;
}

}  // namespace

Result<std::string> OsdService::member_addr(int32_t osd) const {
  const auto* info = map().osd(osd);
  if (!info) return make_error(ErrorCode::kUnavailable, "osd." + std::to_string(osd) + " unknown");
  return info->addr();
}

std::vector<PgMember> OsdService::acting_members(const proto::Pool& pool, uint32_t pg) const {
  std::vector<PgMember> members;
  for (int32_t osd : map().acting(pool, pg)) {
    const auto* info = map().osd(osd);
    members.push_back(PgMember{osd, info ? info->up_from() : 0});
  }
  return members;
}

std::vector<OsdService::PgKey> OsdService::primary_pgs() const {
  std::vector<PgKey> mine;
  for (const auto& pool : map().proto().pools()) {
    for (uint32_t pg = 0; pg < pool.pg_num(); ++pg) {
      auto acting = map().acting(pool, pg);
      if (!acting.empty() && acting.front() == options_.id) mine.emplace_back(pool.id(), pg);
    }
  }
  return mine;
}

awaitable<Result<PgState::OpGuard>> OsdService::admit(uint32_t pool_id, uint32_t pg_id) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto* pool = map().pool(static_cast<int32_t>(pool_id));
    if (!pool) co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(pool_id));
    auto acting = acting_members(*pool, pg_id);
    if (acting.empty() || acting.front().osd != options_.id) {
      co_return make_error(ErrorCode::kNotPrimary, entity_ + " is not the primary of pg " +
                                                       pg_name(pool_id, pg_id) + " at epoch " +
                                                       std::to_string(map().epoch()));
    }
    DFS_CO_AWAIT_TRY(PgState * pg, load_pg(pool_id, pg_id));
    if (pg->active_for(acting)) co_return PgState::OpGuard(pg);
    auto guard = co_await locks_.lock(peer_lock_key(pool_id, pg_id));
    pool = map().pool(static_cast<int32_t>(pool_id));
    if (pool && pg->active_for(acting_members(*pool, pg_id))) co_return PgState::OpGuard(pg);
    DFS_CO_TRY_STATUS(co_await peer(pool_id, pg_id, pg));
  }
  co_return make_error(ErrorCode::kUnavailable,
                       "pg " + pg_name(pool_id, pg_id) + ": its acting set kept changing while peering");
}

awaitable<Result<std::optional<PgState::OpGuard>>> OsdService::admit_unless_replica(
    bool any_replica, uint32_t pool, uint32_t pg) {
  if (any_replica) co_return std::optional<PgState::OpGuard>();
  DFS_CO_AWAIT_TRY(auto op, admit(pool, pg));
  co_return std::optional<PgState::OpGuard>(std::move(op));
}

awaitable<Result<OsdService::MemberListing>> OsdService::list_member(int32_t osd, uint32_t pool,
                                                                     uint32_t pg) {
  MemberListing listing;
  listing.osd = osd;
  if (osd == options_.id) {
    DFS_CO_AWAIT_TRY(PgState * state, load_pg(pool, pg));
    listing.last_update = state->last_update();
    auto list = [this, pool, pg] { return store_->list(pool, pg); };  // named: see on_read
    DFS_CO_AWAIT_TRY(auto entries, run_blocking(blocking_, std::move(list)));
    for (auto& [name, info] : entries) listing.objects.emplace(std::move(name), info.version);
    co_return listing;
  }
  std::string addr = DFS_CO_TRY(member_addr(osd));
  proto::ListRequest request;
  request.set_pool(pool);
  request.set_pg(pg);
  request.set_epoch(map().epoch());
  request.set_any_replica(true);
  DFS_CO_AWAIT_TRY(auto reply, messenger_.call_proto<proto::ListReply>(
                                   addr, rpc::kOsdList, request, options_.replica_timeout));
  listing.last_update = reply.last_update();
  for (const auto& e : reply.entries()) {
    listing.objects.emplace(e.name(), ObjectVersion{e.version().epoch(), e.version().seq()});
  }
  co_return listing;
}

awaitable<Result<std::optional<ObjectCopy>>> OsdService::fetch_copy(int32_t osd,
                                                                    const ObjectKey& key) {
  using Copy = std::optional<ObjectCopy>;
  if (osd == options_.id) {
    auto read = [this, key]() -> Result<Copy> {
      auto info = store_->stat(key);
      if (!info) {
        if (info.error().code() == ErrorCode::kNotFound) return Copy();
        return unexpected(info.error());
      }
      auto data = store_->read(key, 0, info->size);
      if (!data) return unexpected(data.error());
      return Copy(ObjectCopy{info->version, std::move(*data)});
    };
    co_return co_await run_blocking(blocking_, std::move(read));
  }
  std::string addr = DFS_CO_TRY(member_addr(osd));
  proto::ReadRequest request;
  *request.mutable_object() = locator(key.pool, key.pg, key.name);
  request.set_epoch(map().epoch());
  request.set_any_replica(true);
  std::string data;
  auto reply = co_await messenger_.call_proto<proto::ReadReply>(
      addr, rpc::kOsdRead, request, options_.replica_timeout, {}, &data);
  if (!reply) {
    if (reply.error().code() == ErrorCode::kNotFound) co_return Copy();
    co_return unexpected(std::move(reply).error());
  }
  co_return Copy(ObjectCopy{ObjectVersion{reply->version().epoch(), reply->version().seq()},
                            std::move(data)});
}

awaitable<Status> OsdService::push_copy(int32_t osd, const ObjectKey& key,
                                        std::optional<ObjectCopy> copy) {
  if (osd == options_.id) {
    auto apply = [this, txn = push_transaction(key, copy)]() mutable {
      return store_->apply(std::move(txn));
    };
    co_return co_await run_blocking(blocking_, std::move(apply));
  }
  std::string addr = DFS_CO_TRY(member_addr(osd));
  proto::PushRequest request;
  *request.mutable_object() = locator(key.pool, key.pg, key.name);
  request.set_epoch(map().epoch());
  request.set_remove(!copy);
  std::string data;
  if (copy) {
    request.mutable_version()->set_epoch(copy->version.epoch);
    request.mutable_version()->set_seq(copy->version.seq);
    data = std::move(copy->data);
  }
  auto reply = co_await messenger_.call(addr, rpc::kOsdPush, request.SerializeAsString(),
                                        std::move(data), options_.replica_timeout);
  if (!reply) co_return unexpected(std::move(reply).error());
  co_return ok_status();
}

awaitable<Status> OsdService::activate_member(int32_t osd, uint32_t pool, uint32_t pg,
                                              const proto::Version& last_update) {
  if (osd == options_.id) {
    DFS_CO_AWAIT_TRY(PgState * state, load_pg(pool, pg));
    Transaction txn;
    state->activate_to(txn, pool, pg, last_update);
    auto apply = [this, txn = std::move(txn)]() mutable { return store_->apply(std::move(txn)); };
    co_return co_await run_blocking(blocking_, std::move(apply));
  }
  std::string addr = DFS_CO_TRY(member_addr(osd));
  proto::PgActivateRequest request;
  request.set_pool(pool);
  request.set_pg(pg);
  *request.mutable_last_update() = last_update;
  request.set_epoch(map().epoch());
  std::string no_data;
  auto reply = co_await messenger_.call(addr, rpc::kOsdPgActivate,
                                        request.SerializeAsString(), std::move(no_data),
                                        options_.replica_timeout);
  if (!reply) co_return unexpected(std::move(reply).error());
  co_return ok_status();
}

awaitable<Status> OsdService::peer(uint32_t pool_id, uint32_t pg_id, PgState* pg) {
  pg->deactivate();
  auto drained_by = Clock::now() + options_.map_wait;
  while (pg->inflight() > 0) {
    if (Clock::now() > drained_by) {
      co_return make_error(ErrorCode::kUnavailable,
                           "pg " + pg_name(pool_id, pg_id) + ": ops of the previous interval did not finish");
    }
    co_await sleep_for(kDrainPoll);
  }
  const auto* pool = map().pool(static_cast<int32_t>(pool_id));
  if (!pool) co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(pool_id));
  auto acting = acting_members(*pool, pg_id);
  if (acting.empty() || acting.front().osd != options_.id) {
    co_return make_error(ErrorCode::kNotPrimary, "no longer the primary of pg " + pg_name(pool_id, pg_id));
  }

  std::vector<MemberListing> members;
  for (const auto& m : acting) {
    auto listing = co_await list_member(m.osd, pool_id, pg_id);
    if (!listing) {
      co_return unexpected(std::move(listing).error().with_context(
          "peering pg " + pg_name(pool_id, pg_id) + ": listing osd." + std::to_string(m.osd)));
    }
    members.push_back(std::move(*listing));
  }
  size_t auth = 0;  // ties go to the primary (index 0)
  for (size_t i = 1; i < members.size(); ++i) {
    if (version_less(members[auth].last_update, members[i].last_update)) auth = i;
  }

  // What each other member lacks: objects to copy from the authoritative one (a
  // different or missing version) and objects to remove (absent there).
  std::map<std::string, std::vector<int32_t>> copy_to, remove_from;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i == auth) continue;
    const auto& have = members[i].objects;
    for (const auto& [name, version] : members[auth].objects) {
      auto it = have.find(name);
      if (it == have.end() || !same_version(it->second, version)) copy_to[name].push_back(members[i].osd);
    }
    for (const auto& [name, version] : have) {
      if (!members[auth].objects.count(name)) remove_from[name].push_back(members[i].osd);
    }
  }

  // Counted down as objects are moved, for `dfs status`; what is left when this pass
  // ends (an error) leaves the count with it.
  struct Pending {
    uint64_t& total;
    uint64_t left;
    ~Pending() { total -= left; }
    void one_done() {
      --left;
      --total;
    }
  } pending{recovery_pending_objects_, copy_to.size() + remove_from.size()};
  recovery_pending_objects_ += pending.left;
  std::map<int32_t, size_t> copied, removed;
  // A few objects in flight at once, so that one's read on the source, the transfer
  // and another's fdatasync on the target overlap (one at a time, recovery moved a
  // fifth of the disk's sequential bandwidth).
  constexpr size_t kObjectsInFlight = 4;
  auto copy_one = [&](const std::string& name, const std::vector<int32_t>& targets) -> awaitable<Status> {
    ObjectKey key{pool_id, pg_id, name};
    auto copy = co_await fetch_copy(members[auth].osd, key);
    if (!copy) {
      co_return unexpected(std::move(copy).error().with_context(
          "peering pg " + pg_name(pool_id, pg_id) + ": reading " + name + " from osd." +
          std::to_string(members[auth].osd)));
    }
    for (int32_t target : targets) {
      std::optional<ObjectCopy> pushed = *copy;  // named: see below
      DFS_CO_TRY_STATUS(co_await push_copy(target, key, std::move(pushed)));
      ++(*copy ? copied : removed)[target];
    }
    pending.one_done();
    co_return ok_status();
  };
  std::vector<std::pair<std::string, std::vector<int32_t>>> to_copy(copy_to.begin(), copy_to.end());
  for (size_t first = 0; first < to_copy.size(); first += kObjectsInFlight) {
    std::vector<awaitable<Status>> batch;
    for (size_t i = first; i < std::min(to_copy.size(), first + kObjectsInFlight); ++i) {
      batch.push_back(copy_one(to_copy[i].first, to_copy[i].second));
    }
    for (auto& done : co_await gather(std::move(batch))) DFS_CO_TRY_STATUS(std::move(done));
  }
  for (const auto& [name, targets] : remove_from) {
    // Named, not a temporary: GCC 12 destroys a temporary in a co_await twice.
    ObjectKey key{pool_id, pg_id, name};
    for (int32_t target : targets) {
      std::optional<ObjectCopy> absent;
      DFS_CO_TRY_STATUS(co_await push_copy(target, key, std::move(absent)));
      ++removed[target];
    }
    pending.one_done();
  }

  proto::Version last_update = members[auth].last_update;
  for (const auto& m : members) {
    DFS_CO_TRY_STATUS(co_await activate_member(m.osd, pool_id, pg_id, last_update));
  }
  pg->set_active(std::move(acting));
  for (const auto& m : members) {
    if (copied.count(m.osd) || removed.count(m.osd)) {
      spdlog::info("{}: pg {} recovered osd.{}: {} objects copied, {} removed (from osd.{})",
                   entity_, pg_name(pool_id, pg_id), m.osd, copied[m.osd], removed[m.osd],
                   members[auth].osd);
    }
  }
  recovered_objects_ += copy_to.size() + remove_from.size();
  co_return ok_status();
}

void OsdService::schedule_peering() {
  peering_wanted_ = true;
  if (peering_running_) return;
  peering_running_ = true;
  spawn_checked(executor_, peering_loop());
}

awaitable<void> OsdService::peering_loop() {
  while (peering_wanted_) {
    peering_wanted_ = false;
    size_t failed = 0;
    const std::vector<PgKey> mine = primary_pgs();
    for (auto [pool, pg] : mine) {
      auto admitted = co_await admit(pool, pg);  // peers when needed; the guard ends at once
      if (!admitted && admitted.error().code() != ErrorCode::kNotPrimary) {
        ++failed;
        spdlog::warn("{}: pg {} not active: {}", entity_, pg_name(pool, pg),
                     admitted.error().to_string());
      }
    }
    if (failed > 0 && !peering_wanted_) {
      co_await sleep_for(kPeeringRetry);
      peering_wanted_ = true;
    }
  }
  peering_running_ = false;
}

awaitable<Result<rpc::Reply>> OsdService::on_push(rpc::ConnectionPtr, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::PushRequest>(frame.body));
  if (request.remove() && !frame.data.empty()) {
    co_return make_error(ErrorCode::kInvalidArgument, "a removal with data");
  }
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY(locate(request.object()));
  auto guard = co_await locks_.lock(std::to_string(request.object().pool()) + "/" +
                                    request.object().name());
  std::optional<ObjectCopy> copy;
  if (!request.remove()) {
    copy = ObjectCopy{ObjectVersion{request.version().epoch(), request.version().seq()},
                      std::move(frame.data)};
  }
  ObjectKey key = object_key(request.object());  // named: see peer()
  DFS_CO_TRY_STATUS(co_await push_copy(options_.id, key, std::move(copy)));
  co_return rpc::make_reply(proto::PushReply());
}

awaitable<Result<rpc::Reply>> OsdService::on_pg_activate(rpc::ConnectionPtr, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::PgActivateRequest>(frame.body));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  if (!map().pool(static_cast<int32_t>(request.pool()))) {
    co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(request.pool()));
  }
  DFS_CO_TRY_STATUS(
      co_await activate_member(options_.id, request.pool(), request.pg(), request.last_update()));
  co_return rpc::make_reply(proto::PgActivateReply());
}

}  // namespace dfs::osd
