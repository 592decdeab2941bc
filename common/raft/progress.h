// What a leader knows about one follower's log, and how it paces sending to it.
// Owned by the RaftNode (leader role only); see "Raft (common/raft)" in
// docs/architecture.md for the three states.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>

#include "common/raft/types.h"

namespace dfs::raft {

enum class ProgressState : uint8_t {
  kProbe,      // position unknown: one append in flight, then wait for the answer
  kReplicate,  // position known: stream appends optimistically, up to a window
  kSnapshot,   // the entries it needs are compacted: ship the snapshot in chunks
};

struct Progress {
  Index match = 0;  // highest index known to be in the follower's log
  Index next = 1;   // next index to send
  ProgressState state = ProgressState::kProbe;
  bool probe_sent = false;       // kProbe: an append is outstanding
  std::deque<Index> inflight;    // kReplicate: last index of each unacknowledged append
  bool recent_active = false;    // heard from since the last check-quorum round
  uint64_t lease_round = 0;      // the newest heartbeat round it answered

  Index snapshot_index = 0;      // kSnapshot: image being shipped
  uint64_t snapshot_offset = 0;  // kSnapshot: bytes the follower acknowledged
  int snapshot_idle_ticks = 0;   // kSnapshot: ticks since the last chunk was sent
  int snapshot_silent_ticks = 0; // kSnapshot: ticks since the follower last answered one

  bool paused(size_t max_inflight) const {
    switch (state) {
      case ProgressState::kProbe: return probe_sent;
      case ProgressState::kReplicate: return inflight.size() >= max_inflight;
      case ProgressState::kSnapshot: return true;
    }
    return true;
  }

  void become_probe() {
    // After a snapshot the follower holds at least the snapshot's entries.
    if (state == ProgressState::kSnapshot) next = std::max(match, snapshot_index) + 1;
    else next = match + 1;
    state = ProgressState::kProbe;
    probe_sent = false;
    inflight.clear();
  }
  void become_replicate() {
    state = ProgressState::kReplicate;
    next = match + 1;
    inflight.clear();
  }
  void become_snapshot(Index index) {
    state = ProgressState::kSnapshot;
    snapshot_index = index;
    snapshot_offset = 0;
    snapshot_idle_ticks = 0;
    snapshot_silent_ticks = 0;
    inflight.clear();
  }

  // An acknowledgement of `index`; returns whether match advanced.
  bool ack(Index index) {
    probe_sent = false;
    while (!inflight.empty() && inflight.front() <= index) inflight.pop_front();
    if (next < index + 1) next = index + 1;
    if (index <= match) return false;
    match = index;
    return true;
  }
};

}  // namespace dfs::raft
