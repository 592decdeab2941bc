// Messages exchanged by Raft peers, as plain structs. The core produces them in
// Ready::early_messages and Ready::messages and consumes them in RaftNode::step;
// transport and encoding belong to the application (a protobuf mapping can live in
// common/proto later).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/raft/types.h"

namespace dfs::raft {

enum class MessageType : uint8_t {
  kPreVote,        // "would you vote for me at `term`?" — changes nobody's term
  kPreVoteResp,
  kVote,
  kVoteResp,
  kAppend,         // AppendEntries: entries after (index, log_term)
  kAppendResp,     // success: index = last matching index; reject: see reject_hint
  kHeartbeat,      // carries commit (bounded by the follower's match) and a read context
  kHeartbeatResp,
  kSnapshot,       // one chunk of a snapshot image
  kSnapshotResp,   // chunk acknowledged: offset = bytes the follower holds
  kTimeoutNow,     // leader transfer: campaign now, skipping pre-vote and the lease
};

const char* message_type_name(MessageType type);

struct Message {
  MessageType type = MessageType::kAppend;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  Term term = 0;

  // (Pre)Vote: the candidate's last log position. Append: the entry preceding
  // `entries`. AppendResp: the index acknowledged or rejected.
  Index index = 0;
  Term log_term = 0;
  std::vector<Entry> entries{};
  Index commit = 0;

  // AppendResp rejection: the follower's suggestion where to retry (largest index
  // <= `index` whose term is <= the leader's term there) and its term at that index,
  // so the leader skips a whole term per round trip instead of one entry.
  bool reject = false;
  Index reject_hint = 0;

  uint64_t context = 0;   // Heartbeat(Resp): read-index request being confirmed; 0 = none
  // Heartbeat: the leader's round number (RaftNode::lease_start_tick); HeartbeatResp:
  // the round it answers. 0 = none (a sender that predates leases).
  uint64_t lease_round = 0;
  bool transfer = false;  // Vote sent because of TimeoutNow: voters ignore their lease

  // Snapshot chunk: the image identity, this chunk's position, and whether it is the
  // last one. SnapshotResp echoes `snapshot.index` and acknowledges `offset` bytes.
  SnapshotMeta snapshot{};
  uint64_t offset = 0;
  std::string chunk{};
  bool last_chunk = false;
};

}  // namespace dfs::raft
