#include "common/raft/types.h"

#include <algorithm>

namespace dfs::raft {

bool ConfState::contains(NodeId id) const {
  return std::binary_search(voters.begin(), voters.end(), id);
}

std::string encode_conf_state(const ConfState& conf) {
  std::string out;
  out.reserve(conf.voters.size() * 8);
  for (NodeId id : conf.voters) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((id >> (8 * i)) & 0xff));
  }
  return out;
}

std::optional<ConfState> decode_conf_state(std::string_view bytes) {
  if (bytes.size() % 8 != 0) return std::nullopt;
  ConfState conf;
  for (size_t off = 0; off < bytes.size(); off += 8) {
    NodeId id = 0;
    for (int i = 0; i < 8; ++i) {
      id |= static_cast<NodeId>(static_cast<uint8_t>(bytes[off + i])) << (8 * i);
    }
    conf.voters.push_back(id);
  }
  if (!std::is_sorted(conf.voters.begin(), conf.voters.end())) return std::nullopt;
  return conf;
}

std::optional<ConfState> apply_conf_change(const ConfState& conf, const ConfChange& change) {
  ConfState next = conf;
  bool present = conf.contains(change.node);
  if (change.kind == ConfChangeKind::kAddNode) {
    if (present || change.node == kNoNode) return std::nullopt;
    next.voters.push_back(change.node);
    std::sort(next.voters.begin(), next.voters.end());
  } else {
    if (!present) return std::nullopt;
    std::erase(next.voters, change.node);
  }
  return next;
}

}  // namespace dfs::raft
