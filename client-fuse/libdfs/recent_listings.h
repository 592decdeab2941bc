// RecentListings: the last few whole first batches of directory listings the MDS gave
// this mount, for the next listing of the same directory from its start. `rm -rf` opens
// and lists every directory twice in a row (once to see whether it is empty, once to
// walk it); each listing from the start used to be a call, so a replicated rank served
// two listings per removed directory, nearly half of the time of an rm -rf.
//
// A listing may be reused only while it is what the MDS would answer now. The owner
// stamps each with its "started changes" counter, which moves when a change that a
// listing or an inode's attributes could show starts here (a call, a deferred change,
// an answered setattr) and when its rights move, and keeps a listing only if no
// mutating call was running when the listing's call went out and the counter did not
// move while it ran (so the listing reflects every change this mount started before
// it: the call carried or waited for every deferred one). It is handed out again only
// while the counter has not moved since, to the same question. Only in exclusive mode,
// where every change passes through this mount.
//
// Pure state, owned by the FileClient on its I/O thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "common/proto/mds.pb.h"

namespace dfs::client {

class RecentListings {
 public:
  // What a listing was asked with; a listing serves only an identical question.
  struct Question {
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t max_entries = 0;
    bool plus = false;
    bool operator==(const Question&) const = default;
  };

  // At most `max_dirs` listings are kept, the oldest dropped first.
  explicit RecentListings(size_t max_dirs = 16) : max_dirs_(max_dirs) {}

  // Keeps `reply`, the first batch of `dir`'s listing for `question`, valid while the
  // owner's started-changes counter stays at `changes`. Inline file data is not kept
  // (ListedData has it). Replaces what was kept of `dir`.
  void keep(uint64_t dir, const Question& question, uint64_t changes,
            const proto::ReaddirReply& reply);
  // A copy of `dir`'s kept listing if it was kept for `question` and the counter is
  // still at the value it was kept with; a kept listing that went stale is dropped.
  std::optional<proto::ReaddirReply> find(uint64_t dir, const Question& question,
                                          uint64_t changes);
  size_t size() const { return kept_.size(); }

 private:
  struct Kept {
    uint64_t dir = 0;
    Question question;
    uint64_t changes = 0;
    proto::ReaddirReply reply;
  };
  size_t max_dirs_;
  std::deque<Kept> kept_;  // oldest first
};

}  // namespace dfs::client
