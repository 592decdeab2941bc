// ListingPrefetch: directory listings fetched before the kernel asks for them. A tree
// walk (rsync, tar -c, find, du) lists a directory, then each of its subdirectories in
// turn, and waits on the MDS every time: at scale 0.25 the read-back of the lxc tree
// spent 1.2 s in 1,091 cold listings, one after the other. Once a listing is answered,
// the first batch of each subdirectory it names is fetched in the background, a few
// at a time, so that the walk's next listing is usually here already. One level ahead
// of the walk only: a prefetched listing does not prefetch, the kernel's asking for it
// does.
//
// Only in exclusive mode, where every change passes through this client. The owner
// tells of each change whose reach it knows (the directories whose names it changes
// and the inodes it changes: touched()); a listing of a directory such a change names,
// or showing an entry it names, is dropped, even if it was still in flight then. Of
// every other change (reach unknown) the owner's change counter tells: a listing is
// handed out only if that counter has not moved since it was asked for, and only to the
// same user and batch size it was asked with. So under rm -rf or chmod -R the listings
// of the directories the walk has not reached yet stay good. Each is handed out once.
//
// Pure state, owned by the FileClient on its I/O thread; the owner does the I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client-fuse/libdfs/creds.h"
#include "common/proto/mds.pb.h"
#include "common/status/status.h"

namespace dfs::client {

// "." or "..": the kernel gets no attributes for them (Vfs::readdir), so no change of
// theirs makes a listing stale, and a walk never descends into them.
inline bool is_dot(const std::string& name) { return name == "." || name == ".."; }

class ListingPrefetch {
 public:
  // What a listing was asked with; a listing serves only an identical question.
  struct Question {
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t max_entries = 0;
    uint64_t changes = 0;  // the owner's counter of changes of unknown reach, when asked
    bool operator==(const Question&) const = default;
  };
  struct Fetch {
    uint64_t dir = 0;
    Question question;
  };
  enum class State { kAbsent, kInFlight, kReady };

  // `max_in_flight` fetches at once (0: prefetching off); at most `max_held_bytes` of
  // answered listings (their inline file data included) are kept, the oldest dropped.
  explicit ListingPrefetch(size_t max_in_flight, size_t max_held_bytes = 64u << 20,
                           size_t max_queued = 4096);

  bool enabled() const { return max_in_flight_ > 0; }
  // Asks for `dir`'s listing ahead, unless it is in flight, queued, or held for this
  // same question (`changes`: the owner's counter now; restamped when it goes out).
  void want(uint64_t dir, const Question& question);
  // The next listing to fetch now, if a fetch slot is free, stamped with the owner's
  // change counter `changes`; it counts as in flight until arrived().
  std::optional<Fetch> next(uint64_t changes);
  // A fetch ended (a failed one is dropped: the kernel's own request will ask again).
  void arrived(uint64_t dir, Result<proto::ReaddirReply> reply);
  // A change through the owner changes the names in `dirs` and changes, creates or
  // removes `inodes` (a directory in `dirs` changes as an inode too: its times).
  void touched(const std::vector<uint64_t>& dirs, const std::vector<uint64_t>& inodes);
  // Something changed whose reach is unknown: nothing held or in flight is handed out.
  void forget_all();
  // What is known of `dir`'s listing for `question`. kInFlight: wait for arrived().
  State state(uint64_t dir, const Question& question) const;
  // Hands out the listing held for `dir` (state() was kReady) and forgets it.
  std::optional<proto::ReaddirReply> take(uint64_t dir, const Question& question);

  size_t in_flight() const { return in_flight_; }
  size_t held() const { return held_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t fetched() const { return fetched_; }

 private:
  struct Held {
    Question question;
    bool ready = false;
    bool stale = false;  // in flight, and a change reached it: dropped when it lands
    std::unordered_set<uint64_t> touched_in_flight;  // inodes changed while in flight
    proto::ReaddirReply reply;
    size_t bytes = 0;
    uint64_t order = 0;
  };
  // A change reached `dir`'s listing: a held one goes, one in flight goes when it lands.
  void reached(uint64_t dir);
  void drop(uint64_t dir);
  void unshow(uint64_t ino, uint64_t dir);  // one shown_in_ pair

  size_t max_in_flight_;
  size_t max_held_bytes_;
  size_t max_queued_;
  size_t in_flight_ = 0;
  size_t held_bytes_ = 0;
  uint64_t next_order_ = 0;
  uint64_t hits_ = 0;
  uint64_t fetched_ = 0;
  std::unordered_map<uint64_t, Held> held_;          // in flight or answered
  std::unordered_set<uint64_t> flying_;              // the dirs of held_ in flight
  std::unordered_multimap<uint64_t, uint64_t> shown_in_;  // entry inode -> answered dir
  std::deque<Fetch> queue_;                          // wanted, not yet asked
  std::unordered_set<uint64_t> queued_;              // the dirs in queue_
  std::deque<std::pair<uint64_t, uint64_t>> ages_;   // (dir, order) answered, oldest first
};

}  // namespace dfs::client
