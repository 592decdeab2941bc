// MapStateMachine: the cluster map as the state machine of the monitors' Raft group.
// Each committed entry is one encoded proto::MapCommand; applying it runs
// ClusterMap::apply, which bumps the epoch by exactly one when the command is valid and
// changes nothing when it is not, so every monitor that applies the same log reaches
// the same map at the same epoch (the epoch is a function of the log, never of a
// clock or of which monitor proposed). The snapshot image is the encoded full map.
// Keeps the last `history` incrementals in memory to catch subscribers up.
// Owned by the Monitor; called on its I/O thread only (the RaftGroup's executor).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

#include "common/map/cluster_map.h"
#include "common/proto/mon.pb.h"
#include "common/raft/state_machine.h"

namespace dfs::mon {

class MapStateMachine final : public raft::StateMachine {
 public:
  // `genesis`: the map the log starts from (the store's map at mkfs: epoch 0 and the
  // cluster's fsid; identical on every monitor of a quorum).
  explicit MapStateMachine(proto::ClusterMap genesis, size_t history = 1000);

  // Called after every change with what subscribers need: one incremental after an
  // applied command, the full map after a restore.
  void set_listener(std::function<void(const proto::MapUpdate&)> listener);

  // raft::StateMachine. apply() returns encode_result() of the outcome.
  std::string apply(raft::Index index, std::string_view command) override;
  std::string snapshot(raft::Index applied) override;
  void restore(raft::Index index, std::string_view image) override;

  const ClusterMap& map() const { return map_; }
  raft::Index applied_index() const { return applied_; }

  // What a subscriber at `have_epoch` lacks: the incrementals after it when they are
  // all still kept, else the full map; empty when it is current (or ahead).
  proto::MapUpdate catch_up(uint64_t have_epoch) const;

  // The result of one applied command as carried back to the proposer: the epoch it
  // produced, or the error that rejected it (deterministic, the same on every monitor).
  static std::string encode_result(const Result<uint64_t>& outcome);
  // Errors: the encoded error; kInternal when `result` does not decode.
  static Result<uint64_t> decode_result(std::string_view result);

 private:
  ClusterMap map_;
  raft::Index applied_ = 0;
  size_t history_limit_;
  std::deque<proto::MapIncremental> history_;  // consecutive epochs, the newest last
  std::function<void(const proto::MapUpdate&)> listener_;
};

}  // namespace dfs::mon
