// RaftNode snapshot shipping: the leader sends the storage's snapshot image to a
// follower that needs compacted entries, one chunk at a time; the follower assembles
// the chunks in memory and installs the image only when it is complete.
#include <algorithm>

#include "common/raft/check.h"
#include "common/raft/raft_node.h"

namespace dfs::raft {

void RaftNode::send_snapshot_chunk(NodeId to, Progress& pr) {
  const Snapshot& snap = storage_.snapshot();
  if (config_.images_on_demand && snap.meta.index != sendable_image_index_) {
    // The stored image points at the application's state: the owner attaches a whole
    // one (attach_image), and the transfer starts then. Only for a follower that answers:
    // one that is down would cost an image per compaction and receive none of them.
    if (pr.recent_active) wants_image_ = true;
    return;
  }
  if (pr.snapshot_index != snap.meta.index) {
    // Compacted again since the transfer began: restart with the newer image.
    pr.become_snapshot(snap.meta.index);
  }
  uint64_t offset = std::min<uint64_t>(pr.snapshot_offset, snap.data.size());
  uint64_t len = std::min<uint64_t>(config_.snapshot_chunk_bytes, snap.data.size() - offset);
  pr.snapshot_idle_ticks = 0;
  send_early(Message{.type = MessageType::kSnapshot,
                     .to = to,
                     .snapshot = snap.meta,
                     .offset = offset,
                     .chunk = snap.data.substr(offset, len),
                     .last_chunk = offset + len == snap.data.size()});
}

void RaftNode::handle_snapshot_chunk(const Message& m) {
  if (m.snapshot.index <= commit_) {
    // Already have everything it covers (a duplicate, or caught up meanwhile).
    send(Message{.type = MessageType::kAppendResp, .to = m.from, .index = commit_});
    return;
  }
  bool same_image = assembly_ && assembly_->meta == m.snapshot;
  if (!same_image) {
    assembly_.reset();
    if (m.offset != 0) {
      send(Message{.type = MessageType::kSnapshotResp, .to = m.from, .snapshot = m.snapshot});
      return;  // offset 0 asks the leader to start over
    }
    assembly_ = Assembly{m.snapshot, {}};
  }
  if (m.offset == assembly_->data.size()) assembly_->data += m.chunk;
  bool complete = m.last_chunk && m.offset + m.chunk.size() == assembly_->data.size();
  if (!complete) {
    send(Message{.type = MessageType::kSnapshotResp,
                 .to = m.from,
                 .snapshot = m.snapshot,
                 .offset = assembly_->data.size()});
    return;
  }
  Snapshot snap{assembly_->meta, std::move(assembly_->data)};
  assembly_.reset();
  install_snapshot(std::move(snap));
  send(Message{.type = MessageType::kAppendResp, .to = m.from, .index = storage_.last_index()});
}

void RaftNode::install_snapshot(Snapshot snap) {
  DFS_RAFT_CHECK(snap.meta.index > commit_ && applied_ <= commit_);
  forget_synced_from(storage_.first_index());  // the whole log is replaced
  storage_.apply_snapshot(snap);
  must_sync_ = true;
  sendable_image_index_ = snap.meta.index;  // a whole image: the leader sent it
  commit_ = snap.meta.index;
  // Every entry up to commit_ was handed out and advanced before this step (ready and
  // advance are never separated by a step), so the image simply replaces them.
  applied_ = snap.meta.index;
  refresh_conf();
  installed_snapshot_ = std::move(snap);
}

void RaftNode::handle_snapshot_response(const Message& m) {
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  pr.recent_active = true;
  if (pr.state != ProgressState::kSnapshot || m.snapshot.index != pr.snapshot_index) return;
  if (m.offset < pr.snapshot_offset && m.offset != 0) return;  // stale acknowledgement
  pr.snapshot_silent_ticks = 0;
  pr.snapshot_offset = m.offset;
  send_snapshot_chunk(m.from, pr);
}

}  // namespace dfs::raft
