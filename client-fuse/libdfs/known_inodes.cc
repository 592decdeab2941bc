#include "client-fuse/libdfs/known_inodes.h"

#include <algorithm>

#include "client-fuse/libdfs/attr_predict.h"

namespace dfs::client {

void KnownInodes::set(Ino ino, proto::Inode inode) {
  Known& k = known_[ino];
  k.inode = std::move(inode);
  k.inode.clear_inline_data();
  k.exact = true;
}

void KnownInodes::learn(const proto::Inode& inode) {
  if (inode.ino() == 0) return;
  // Attribute changes not yet applied by the MDS: the prediction stands for now; the
  // newest inode seen meanwhile is weighed against their reply when they settle.
  if (auto p = pending_.find(inode.ino()); p != pending_.end()) {
    if (!p->second.newer || inode.version() > p->second.newer->version()) {
      p->second.newer = inode;
      p->second.newer_predicted = false;
    }
    return;
  }
  if (known_.size() >= kMaxKnown && !known_.count(inode.ino())) known_.clear();
  auto it = known_.find(inode.ino());
  // Replies may pass each other: never go back to an older version.
  if (it != known_.end() && it->second.inode.ino() != 0 &&
      inode.version() < it->second.inode.version()) {
    return;
  }
  set(inode.ino(), inode);
}

void KnownInodes::adopt_prediction(const proto::Inode& inode) {
  set(inode.ino(), inode);
  // A pending attribute change's reply comes before this change's: it must not
  // replace the prediction when it settles.
  if (auto p = pending_.find(inode.ino()); p != pending_.end()) {
    p->second.newer = known_[inode.ino()].inode;
    p->second.newer_predicted = true;
  }
}

const KnownInodes::Known* KnownInodes::find(Ino ino) const {
  auto it = known_.find(ino);
  return it == known_.end() ? nullptr : &it->second;
}

KnownInodes::Known* KnownInodes::find_mutable(Ino ino) {
  auto it = known_.find(ino);
  return it == known_.end() ? nullptr : &it->second;
}

void KnownInodes::mark_inexact(Ino ino) {
  if (auto it = known_.find(ino); it != known_.end()) it->second.exact = false;
}

void KnownInodes::prefer_newer(proto::Inode& inode) const {
  const Known* k = find(inode.ino());
  if (!k || !k->exact) return;
  if (!pending_.count(inode.ino()) && inode.version() >= k->inode.version()) return;
  std::string inline_data = std::move(*inode.mutable_inline_data());
  inode = k->inode;
  *inode.mutable_inline_data() = std::move(inline_data);
}

void KnownInodes::erase(Ino ino) { known_.erase(ino); }

void KnownInodes::clear() { known_.clear(); }

void KnownInodes::retain_if(const std::function<bool(Ino)>& keep) {
  std::erase_if(known_, [&keep](const auto& kv) { return !keep(kv.first); });
}

void KnownInodes::predict_attrs(Ino ino, const proto::Inode& predicted, uint32_t valid,
                                const Creds& creds) {
  PendingAttrs& p = pending_[ino];
  if (!p.queued) {
    p.queued = true;
    p.valid = 0;
    queue_.push_back(ino);
  }
  p.valid |= valid;
  p.predicted = predicted;
  p.creds = creds;
  // This change comes after anything predicted before it: its reply is what we know.
  p.newer.reset();
  p.newer_predicted = false;
  set(ino, predicted);
}

std::vector<KnownInodes::AttrChange> KnownInodes::take_attr_changes() {
  std::vector<AttrChange> changes;
  for (Ino ino : queue_) {
    auto it = pending_.find(ino);
    if (it == pending_.end() || !it->second.queued) continue;
    PendingAttrs& p = it->second;
    p.queued = false;
    ++p.in_flight;
    changes.push_back(AttrChange{ino, merged_setattr(p.predicted, p.valid), p.creds});
  }
  queue_.clear();
  return changes;
}

void KnownInodes::attrs_answered(Ino ino, const proto::Inode* applied) {
  bool settled = true;
  std::optional<proto::Inode> newer;
  bool newer_predicted = false;
  if (auto it = pending_.find(ino); it != pending_.end()) {
    --it->second.in_flight;
    settled = !it->second.queued && it->second.in_flight <= 0;
    if (settled) {
      newer = std::move(it->second.newer);
      newer_predicted = it->second.newer_predicted;
      pending_.erase(it);
    }
  }
  // A newer prediction for the inode is still pending: it stays what we know.
  if (!applied || !settled) return;
  // Another request's reply may have passed this one (a create in this directory that
  // the MDS applied after the change): learn whichever the MDS applied last.
  learn(*applied);
  if (newer && newer_predicted) {
    // Applied after these changes (see PendingAttrs::newer_predicted): it stands, at
    // their reply's version at least, until its own reply brings the MDS's.
    newer->set_version(std::max(newer->version(), applied->version()));
    set(ino, std::move(*newer));
  } else if (newer) {
    learn(*newer);
  }
}

}  // namespace dfs::client
