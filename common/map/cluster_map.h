// ClusterMap: the OSD and pool map as a deterministic state machine. The monitor
// orders MapCommands; every daemon and client applies the same commands and computes
// the same placement from it (CRUSH is a pure function of the map). Not thread-safe:
// each holder keeps its copy on its own executor.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/crush/crush_map.h"
#include "common/proto/map.pb.h"
#include "common/status/status.h"

namespace dfs {

class ClusterMap {
 public:
  ClusterMap() = default;
  explicit ClusterMap(proto::ClusterMap map);

  const proto::ClusterMap& proto() const { return map_; }
  uint64_t epoch() const { return map_.epoch(); }

  // Applies one command and bumps the epoch. On error nothing changes.
  // Errors: kInvalidArgument, kAlreadyExists (pool name), kNotFound (OSD), kNoSuchPool.
  Status apply(const proto::MapCommand& command);

  // Applies a committed incremental. Errors: kStaleEpoch if it does not follow epoch().
  Status apply_incremental(const proto::MapIncremental& incremental);

  const proto::OsdInfo* osd(int32_t id) const;
  const proto::MdsInfo* mds(std::string_view name) const;
  // The up, active (not standby) MDS serving `rank` with the newest leader term, if any.
  const proto::MdsInfo* mds_for_rank(uint32_t rank) const;
  const proto::Pool* pool(int32_t id) const;
  const proto::Pool* pool_by_name(std::string_view name) const;

  // Object name -> placement group of `pool`.
  static uint32_t pg_of(const proto::Pool& pool, std::string_view object_name);

  // The PG's OSDs in CRUSH order, whether up or not (out OSDs are never placed).
  std::vector<int32_t> pg_osds(const proto::Pool& pool, uint32_t pg) const;
  // The up subset of pg_osds, in the same order: the first is the primary.
  std::vector<int32_t> acting(const proto::Pool& pool, uint32_t pg) const;

  bool is_up(int32_t osd_id) const;
  // The fence of a client entity the MDS evicted, if any: every request of it is refused.
  const proto::ClientFence* client_fence(std::string_view entity) const;
  // The addresses (as in `previous`) of OSDs that were up there and are down or have
  // restarted here: a connection to one of them is useless and should be closed.
  std::vector<std::string> osd_addrs_gone_since(const ClusterMap& previous) const;

 private:
  void rebuild_crush();
  Status apply_boot(const proto::BootOsd& boot);
  Status apply_create_pool(const proto::CreatePool& create);
  Status apply_boot_mds(const proto::BootMds& boot);
  void apply_fence_client(const proto::FenceClient& fence);
  proto::OsdInfo* mutable_osd(int32_t id);

  proto::ClusterMap map_;
  crush::CrushMap crush_ = crush::CrushMap::build({});
};

}  // namespace dfs
