#include "common/raft/message.h"

namespace dfs::raft {

const char* message_type_name(MessageType type) {
  switch (type) {
    case MessageType::kPreVote: return "PreVote";
    case MessageType::kPreVoteResp: return "PreVoteResp";
    case MessageType::kVote: return "Vote";
    case MessageType::kVoteResp: return "VoteResp";
    case MessageType::kAppend: return "Append";
    case MessageType::kAppendResp: return "AppendResp";
    case MessageType::kHeartbeat: return "Heartbeat";
    case MessageType::kHeartbeatResp: return "HeartbeatResp";
    case MessageType::kSnapshot: return "Snapshot";
    case MessageType::kSnapshotResp: return "SnapshotResp";
    case MessageType::kTimeoutNow: return "TimeoutNow";
  }
  return "?";
}

}  // namespace dfs::raft
