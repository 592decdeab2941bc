// RaftGroupRuntime's outgoing messages: one FIFO queue and at most one sender coroutine
// per peer. Raft tolerates loss, so a peer that cannot be reached has its queue dropped
// (the leader resends from its progress state) instead of holding memory or the loop.
#include <spdlog/spdlog.h>

#include "common/raft/raft_codec.h"
#include "common/raft/raft_group_runtime.h"
#include "common/rpc/methods.h"

namespace dfs::raft {

void RaftGroupRuntime::send(const Message& m) {
  if (!options_.peers.count(m.to)) {
    ++counters_.messages_dropped;
    spdlog::debug("raft group {}: no address for node {}", options_.group_id, m.to);
    return;
  }
  PeerQueue& q = peer_queues_[m.to];
  if (q.frames.size() >= options_.max_queued_per_peer) {
    ++counters_.messages_dropped;
    return;
  }
  q.frames.push_back(encode_envelope(options_.group_id, m));
  if (!q.sending) {
    q.sending = true;
    spawn_checked(executor_, sender(shared_from_this(), m.to));
  }
}

awaitable<void> RaftGroupRuntime::sender(std::shared_ptr<RaftGroupRuntime> self, NodeId to) {
  PeerQueue& q = peer_queues_[to];  // std::map: the reference survives the awaits
  while (!stopped_ && !q.frames.empty()) {
    std::string address = options_.peers[to];
    auto conn = co_await messenger_.connection(address, Clock::now() + options_.connect_timeout);
    if (stopped_) break;
    if (!conn) {
      spdlog::debug("raft group {}: dropping {} messages to node {}: {}", options_.group_id,
                    q.frames.size(), to, conn.error().to_string());
      counters_.messages_dropped += q.frames.size();
      q.frames.clear();
      break;
    }
    // One-way frames: replies travel as separate raft messages. Connection::send only
    // queues; its write loop keeps the frames in order.
    while (!q.frames.empty()) {
      (*conn)->send(rpc::kRaftMessage, std::move(q.frames.front()));
      q.frames.pop_front();
      ++counters_.messages_sent;
    }
  }
  q.sending = false;
}

}  // namespace dfs::raft
