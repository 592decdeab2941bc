#include "common/map/cluster_map.h"

#include <algorithm>

#include "common/crush/hash.h"

namespace dfs {

ClusterMap::ClusterMap(proto::ClusterMap map) : map_(std::move(map)) { rebuild_crush(); }

void ClusterMap::rebuild_crush() {
  std::vector<crush::OsdEntry> entries;
  for (const auto& osd : map_.osds()) {
    entries.push_back(crush::OsdEntry{osd.id(), osd.host(), osd.weight(), osd.in()});
  }
  crush_ = crush::CrushMap::build(std::move(entries));
}

Status ClusterMap::apply(const proto::MapCommand& command) {
  Status status;
  bool placement_changed = true;
  switch (command.command_case()) {
    case proto::MapCommand::kBootOsd:
      status = apply_boot(command.boot_osd());
      break;
    case proto::MapCommand::kMarkDown: {
      auto* osd = mutable_osd(command.mark_down().id());
      if (!osd) return make_error(ErrorCode::kNotFound, "osd." + std::to_string(command.mark_down().id()));
      osd->set_up(false);
      osd->set_down_at(map_.epoch() + 1);
      osd->set_down_since_ms(command.mark_down().at_ms());
      placement_changed = false;  // down keeps CRUSH placement; only the acting set shrinks
      break;
    }
    case proto::MapCommand::kMarkOut:
    case proto::MapCommand::kMarkIn: {
      bool in = command.command_case() == proto::MapCommand::kMarkIn;
      int32_t id = in ? command.mark_in().id() : command.mark_out().id();
      auto* osd = mutable_osd(id);
      if (!osd) return make_error(ErrorCode::kNotFound, "osd." + std::to_string(id));
      osd->set_in(in);
      break;
    }
    case proto::MapCommand::kSetWeight: {
      const auto& cmd = command.set_weight();
      auto* osd = mutable_osd(cmd.id());
      if (!osd) return make_error(ErrorCode::kNotFound, "osd." + std::to_string(cmd.id()));
      if (!(cmd.weight() >= 0)) return make_error(ErrorCode::kInvalidArgument, "negative weight");
      osd->set_weight(cmd.weight());
      break;
    }
    case proto::MapCommand::kSetSpace: {
      const auto& cmd = command.set_space();
      auto* osd = mutable_osd(cmd.id());
      if (!osd) return make_error(ErrorCode::kNotFound, "osd." + std::to_string(cmd.id()));
      osd->set_space(cmd.space());
      osd->set_used_permille(cmd.used_permille());
      placement_changed = false;
      break;
    }
    case proto::MapCommand::kPurgeOsd: {
      int32_t id = command.purge_osd().id();
      const auto* osd = this->osd(id);
      if (!osd) return make_error(ErrorCode::kNotFound, "osd." + std::to_string(id));
      if (osd->up() || osd->in()) {
        return make_error(ErrorCode::kBusy, "osd." + std::to_string(id) + " is " +
                                                (osd->up() ? "up" : "in") +
                                                ": mark it down and out first, and let recovery "
                                                "finish (dfs status)");
      }
      auto* osds = map_.mutable_osds();
      osds->erase(std::find_if(osds->begin(), osds->end(),
                               [id](const proto::OsdInfo& o) { return o.id() == id; }));
      break;
    }
    case proto::MapCommand::kCreatePool:
      status = apply_create_pool(command.create_pool());
      placement_changed = false;
      break;
    case proto::MapCommand::kDeletePool: {
      auto* pools = map_.mutable_pools();
      auto it = std::find_if(pools->begin(), pools->end(), [&](const proto::Pool& p) {
        return p.name() == command.delete_pool().name();
      });
      if (it == pools->end()) {
        return make_error(ErrorCode::kNoSuchPool, "pool '" + command.delete_pool().name() + "'");
      }
      pools->erase(it);
      placement_changed = false;
      break;
    }
    case proto::MapCommand::kBootMds:
      status = apply_boot_mds(command.boot_mds());
      placement_changed = false;
      break;
    case proto::MapCommand::kMarkMdsDown: {
      auto* mds = map_.mutable_mds();
      auto it = std::find_if(mds->begin(), mds->end(), [&](const proto::MdsInfo& m) {
        return m.name() == command.mark_mds_down().name();
      });
      if (it == mds->end()) {
        return make_error(ErrorCode::kNotFound, command.mark_mds_down().name());
      }
      it->set_up(false);
      placement_changed = false;
      break;
    }
    case proto::MapCommand::kFenceClient:
      if (command.fence_client().entity().empty()) {
        return make_error(ErrorCode::kInvalidArgument, "fence_client names no client");
      }
      apply_fence_client(command.fence_client());
      placement_changed = false;
      break;
    case proto::MapCommand::COMMAND_NOT_SET:
      return make_error(ErrorCode::kInvalidArgument, "empty map command");
  }
  if (!status) return status;
  map_.set_epoch(map_.epoch() + 1);
  if (placement_changed) rebuild_crush();
  return ok_status();
}

Status ClusterMap::apply_boot(const proto::BootOsd& boot) {
  if (boot.id() < 0) return make_error(ErrorCode::kInvalidArgument, "negative osd id");
  if (boot.addr().empty() || boot.host().empty()) {
    return make_error(ErrorCode::kInvalidArgument, "osd boot needs an address and a host");
  }
  if (!(boot.weight() >= 0)) return make_error(ErrorCode::kInvalidArgument, "negative weight");
  auto* osd = mutable_osd(boot.id());
  if (!osd) {
    osd = map_.add_osds();
    osd->set_id(boot.id());
    osd->set_in(true);
    osd->set_weight(boot.weight());
    // Keep OSDs sorted by id so that every holder iterates them identically.
    std::sort(map_.mutable_osds()->begin(), map_.mutable_osds()->end(),
              [](const proto::OsdInfo& a, const proto::OsdInfo& b) { return a.id() < b.id(); });
    osd = mutable_osd(boot.id());
  }
  osd->set_addr(boot.addr());
  osd->set_host(boot.host());
  osd->set_up(true);
  osd->set_up_from(map_.epoch() + 1);
  osd->set_instance(boot.instance());
  return ok_status();
}

Status ClusterMap::apply_boot_mds(const proto::BootMds& boot) {
  if (boot.name().empty() || boot.addr().empty()) {
    return make_error(ErrorCode::kInvalidArgument, "mds boot needs a name and an address");
  }
  proto::MdsInfo* mds = nullptr;
  for (auto& m : *map_.mutable_mds()) {
    if (m.name() == boot.name()) mds = &m;
  }
  if (!mds) {
    mds = map_.add_mds();
    mds->set_name(boot.name());
  }
  mds->set_addr(boot.addr());
  mds->set_rank(boot.rank());
  mds->set_up(true);
  mds->set_instance(boot.instance());
  mds->set_up_from(map_.epoch() + 1);
  mds->set_standby(boot.standby());
  if (!boot.standby()) {
    // The rank's new leader: every other replica that led in an older term follows now.
    // One that claims a newer term stays active (this boot came late); clients pick the
    // newest term anyway.
    mds->set_leader_term(boot.leader_term());
    for (auto& m : *map_.mutable_mds()) {
      if (&m != mds && m.rank() == boot.rank() && m.leader_term() <= boot.leader_term()) {
        m.set_standby(true);
      }
    }
  }
  std::sort(map_.mutable_mds()->begin(), map_.mutable_mds()->end(),
            [](const proto::MdsInfo& a, const proto::MdsInfo& b) { return a.name() < b.name(); });
  return ok_status();
}

Status ClusterMap::apply_create_pool(const proto::CreatePool& create) {
  if (create.name().empty()) return make_error(ErrorCode::kInvalidArgument, "empty pool name");
  if (pool_by_name(create.name())) {
    return make_error(ErrorCode::kAlreadyExists, "pool '" + create.name() + "' exists");
  }
  if (create.size() < 1 || create.size() > 10) {
    return make_error(ErrorCode::kInvalidArgument, "pool size must be 1..10");
  }
  if (create.min_size() < 1 || create.min_size() > create.size()) {
    return make_error(ErrorCode::kInvalidArgument, "min_size must be 1..size");
  }
  if (create.pg_num() < 1 || create.pg_num() > 65536) {
    return make_error(ErrorCode::kInvalidArgument, "pg_num must be 1..65536");
  }
  auto* pool = map_.add_pools();
  int32_t id = std::max(map_.next_pool_id(), 1);
  pool->set_id(id);
  pool->set_name(create.name());
  pool->set_size(create.size());
  pool->set_min_size(create.min_size());
  pool->set_pg_num(create.pg_num());
  map_.set_next_pool_id(id + 1);
  return ok_status();
}

Status ClusterMap::apply_incremental(const proto::MapIncremental& incremental) {
  if (incremental.epoch() != epoch() + 1) {
    return make_error(ErrorCode::kStaleEpoch, "incremental " + std::to_string(incremental.epoch()) +
                                                  " does not follow epoch " + std::to_string(epoch()));
  }
  return apply(incremental.command());
}

proto::OsdInfo* ClusterMap::mutable_osd(int32_t id) {
  for (auto& osd : *map_.mutable_osds()) {
    if (osd.id() == id) return &osd;
  }
  return nullptr;
}

const proto::OsdInfo* ClusterMap::osd(int32_t id) const {
  for (const auto& osd : map_.osds()) {
    if (osd.id() == id) return &osd;
  }
  return nullptr;
}

namespace {
// How long a fence stays in the map. A session id is never reused (a new session takes a
// new random nonce), so a fence only has to outlast any pause of the fenced process.
constexpr uint64_t kFenceKeepMs = 24ull * 3600 * 1000;
}  // namespace

void ClusterMap::apply_fence_client(const proto::FenceClient& fence) {
  auto* fences = map_.mutable_fenced_clients();
  if (fence.at_ms() > kFenceKeepMs) {
    const uint64_t oldest_kept = fence.at_ms() - kFenceKeepMs;
    fences->erase(std::remove_if(fences->begin(), fences->end(),
                                 [&](const proto::ClientFence& f) { return f.at_ms() < oldest_kept; }),
                  fences->end());
  }
  if (client_fence(fence.entity())) return;
  auto* added = fences->Add();
  added->set_entity(fence.entity());
  added->set_at_ms(fence.at_ms());
  added->set_reason(fence.reason());
  added->set_epoch(map_.epoch() + 1);
  std::sort(fences->begin(), fences->end(),
            [](const proto::ClientFence& a, const proto::ClientFence& b) { return a.entity() < b.entity(); });
}

const proto::ClientFence* ClusterMap::client_fence(std::string_view entity) const {
  const auto& fences = map_.fenced_clients();
  auto it = std::lower_bound(fences.begin(), fences.end(), entity,
                             [](const proto::ClientFence& f, std::string_view e) { return f.entity() < e; });
  return it != fences.end() && it->entity() == entity ? &*it : nullptr;
}

const proto::MdsInfo* ClusterMap::mds(std::string_view name) const {
  for (const auto& m : map_.mds()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

const proto::MdsInfo* ClusterMap::mds_for_rank(uint32_t rank) const {
  const proto::MdsInfo* best = nullptr;
  for (const auto& m : map_.mds()) {
    if (!m.up() || m.standby() || m.rank() != rank) continue;
    if (!best || m.leader_term() > best->leader_term()) best = &m;
  }
  return best;
}

const proto::Pool* ClusterMap::pool(int32_t id) const {
  for (const auto& p : map_.pools()) {
    if (p.id() == id) return &p;
  }
  return nullptr;
}

const proto::Pool* ClusterMap::pool_by_name(std::string_view name) const {
  for (const auto& p : map_.pools()) {
    if (p.name() == name) return &p;
  }
  return nullptr;
}

uint32_t ClusterMap::pg_of(const proto::Pool& pool, std::string_view object_name) {
  return crush::hash_name(object_name) % pool.pg_num();
}

std::vector<int32_t> ClusterMap::pg_osds(const proto::Pool& pool, uint32_t pg) const {
  return crush_.place(crush::hash32(pg, static_cast<uint32_t>(pool.id())),
                      static_cast<int>(pool.size()));
}

std::vector<int32_t> ClusterMap::acting(const proto::Pool& pool, uint32_t pg) const {
  std::vector<int32_t> out;
  for (int32_t id : pg_osds(pool, pg)) {
    if (is_up(id)) out.push_back(id);
  }
  return out;
}

bool ClusterMap::is_up(int32_t osd_id) const {
  const auto* o = osd(osd_id);
  return o && o->up();
}

std::vector<std::string> ClusterMap::osd_addrs_gone_since(const ClusterMap& previous) const {
  std::vector<std::string> gone;
  for (const auto& now : proto().osds()) {
    const auto* before = previous.osd(now.id());
    if (before && (before->up_from() != now.up_from() || (before->up() && !now.up()))) {
      gone.push_back(before->addr());
    }
  }
  return gone;
}

}  // namespace dfs
