// KnownInodes: what this mount knows of the inodes it met, and the attribute changes it
// answered itself that the MDS has not applied yet (docs/architecture.md, "What the
// client answers itself"). One rule decides what it holds for an inode:
//   - an inode from an MDS reply replaces it unless it is older (replies may pass each
//     other, so a version never goes back);
//   - a prediction of this mount (what a deferred change leaves) replaces it at once;
//   - while attribute changes of the inode are pending, their prediction stands: inodes
//     that replies bring meanwhile are kept aside and weighed once the changes settle
//     (PendingAttrs::newer).
// Whether the mount may answer from what it knows is not decided here: that is a right
// the MDS granted (FileClient::alone). `exact` says whether it knows the inode whole.
//
// Owned by the FileClient on its I/O thread; pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "client-fuse/libdfs/creds.h"
#include "common/proto/mds.pb.h"

namespace dfs::client {

class KnownInodes {
 public:
  using Ino = uint64_t;
  struct Known {
    proto::Inode inode;  // without inline data
    bool exact = true;   // false: changed in a way the MDS did not send back
  };
  // Past this many, everything is forgotten at the next new inode (memory stays bounded;
  // the kernel's own cache of inodes is far smaller).
  static constexpr size_t kMaxKnown = 1u << 20;

  // An inode an MDS reply brought.
  void learn(const proto::Inode& inode);
  // What a deferred change of this mount leaves `inode` as.
  void adopt_prediction(const proto::Inode& inode);
  const Known* find(Ino ino) const;
  // For a change made here that the MDS will confirm (a write's size, an xattr); the
  // caller marks it inexact where it cannot tell the whole effect.
  Known* find_mutable(Ino ino);
  void mark_inexact(Ino ino);
  // A reply's `inode` that may have raced with a newer change of this mount: replaced
  // by what is known (its inline data kept) when that is exact and newer, or while
  // attribute changes of it are pending.
  void prefer_newer(proto::Inode& inode) const;
  void erase(Ino ino);
  void clear();
  // Keeps the inodes `keep` says yes to.
  void retain_if(const std::function<bool(Ino)>& keep);
  size_t size() const { return known_.size(); }

  // ---- Attribute changes answered here (deferred chmod, chown, utimes) ----

  bool attrs_pending(Ino ino) const { return pending_.count(ino) > 0; }
  // A change of the fields `valid` (SetAttrField), by `creds`, predicted to leave the
  // inode as `predicted`: queued, merged with the inode's queued ones, and what is
  // known of it from now on.
  void predict_attrs(Ino ino, const proto::Inode& predicted, uint32_t valid, const Creds& creds);
  bool attrs_queued() const { return !queue_.empty(); }
  struct AttrChange {
    Ino ino = 0;
    proto::SetAttrRequest request;  // absolute: every changed field, merged
    Creds creds;
  };
  // The queued changes, each inode's merged into one, in the order first queued: in
  // flight from now on, until attrs_answered().
  std::vector<AttrChange> take_attr_changes();
  // One in-flight change of `ino` was answered: `applied` is the inode the MDS replied
  // with, null when it failed (the caller decides what the failure means).
  void attrs_answered(Ino ino, const proto::Inode* applied);

 private:
  struct PendingAttrs {
    proto::Inode predicted;  // what the MDS will hold once the changes are applied
    uint32_t valid = 0;      // the fields changed (SetAttrField), *_NOW made explicit
    Creds creds;
    bool queued = false;  // changes not yet taken
    int in_flight = 0;    // taken, no reply yet
    // The newest inode other replies brought meanwhile (a child's create changing a
    // directory's mtime): the MDS may have applied it after the changes, so once they
    // are settled it is what we know if it is newer than their reply.
    std::optional<proto::Inode> newer;
    // `newer` is the prediction of a deferred change queued after these (a create in
    // this directory): the MDS applies it after them, so once they are settled it is
    // what we know, whatever its version says. A prediction's version does not count
    // the attribute changes still pending before it (they keep the MDS's version), so
    // it can be lower than their reply's.
    bool newer_predicted = false;
  };
  void set(Ino ino, proto::Inode inode);

  std::unordered_map<Ino, Known> known_;
  std::unordered_map<Ino, PendingAttrs> pending_;
  std::deque<Ino> queue_;  // the inodes with queued changes, in order
};

}  // namespace dfs::client
