// DataAhead: the data of object files fetched ahead of a tree walk that reads them. A
// cold read-back (rsync, tar -c, cp -a) opens and reads each file in listing order and
// waits on the OSDs for every object file in turn: at scale 0.25, 554 files, ~2 ms
// each. Once a directory is listed, its object files up to kMaxFileBytes are queued in
// listing order, and their data is read in the background, kMaxInFlight at a time,
// within a byte budget; a read from the start of such a file then finds its data here.
//
// A walk that lists without reading (ls -lR, find, du) must not read the tree's data:
// fetches spend credits, kStartCredits at first, and each fetched file that is then
// read earns kCreditsPerUse back (up to kMaxCredits); data never read is evicted
// oldest first when the budget is needed. So a listing-only walk costs kStartCredits
// fetches, and a read-back soon runs kMaxInFlight ahead.
//
// Only in exclusive mode, where every change passes through this client: an entry is
// handed out only for the inode version it was listed with, and the owner drops it
// when it writes or truncates the file. Each is handed out once.
//
// Pure state, owned by the FileClient on its I/O thread; the owner does the I/O.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "client-fuse/libdfs/file_state.h"
#include "client-fuse/libdfs/striping.h"

namespace dfs::client {

class DataAhead {
 public:
  static constexpr uint64_t kMaxFileBytes = 4u << 20;
  static constexpr uint32_t kMaxInFlight = 4;
  static constexpr int kStartCredits = 8;
  static constexpr int kCreditsPerUse = 2;
  static constexpr int kMaxCredits = 64;

  struct File {
    uint64_t ino = 0;
    uint64_t version = 0;
    uint64_t size = 0;
    StripeLayout layout;
  };
  struct Fetch {
    File file;
    std::shared_ptr<Prefetch> piece;  // [0, size): the owner fills data and sets done
  };

  // `max_bytes`: data held or in flight at most (0: off).
  explicit DataAhead(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  bool enabled() const { return max_bytes_ > 0; }

  // A listed object file; ignored past kMaxFileBytes, when empty, or when queued or
  // held already.
  void want(const File& file);
  // The next fetch to start now, if credits, slots and the budget allow.
  std::optional<Fetch> next();
  // The fetch of `ino` ended (its piece holds the data or the error).
  void finished(uint64_t ino);
  // The piece of `ino` listed at `version` (possibly still in flight: wait on done),
  // handed out once; nullptr when there is none or it is of another version.
  std::shared_ptr<Prefetch> take(uint64_t ino, uint64_t version);
  // The file changed through this client: anything queued or held for it goes.
  void drop(uint64_t ino);

  uint64_t fetched() const { return fetched_; }
  uint64_t used() const { return used_; }
  uint64_t held_bytes() const { return bytes_; }

 private:
  struct Held {
    uint64_t version = 0;
    uint64_t order = 0;  // its place in held_order_
    std::shared_ptr<Prefetch> piece;
  };
  void forget(std::unordered_map<uint64_t, Held>::iterator it);
  bool make_room(uint64_t bytes);

  uint64_t max_bytes_;
  std::deque<File> queue_;
  std::unordered_set<uint64_t> queued_;
  std::unordered_map<uint64_t, Held> held_;
  std::deque<std::pair<uint64_t, uint64_t>> held_order_;  // oldest first; stale pairs skipped
  std::unordered_set<uint64_t> in_flight_;
  uint64_t next_order_ = 0;
  uint64_t bytes_ = 0;
  int credits_ = kStartCredits;
  uint64_t fetched_ = 0;
  uint64_t used_ = 0;
};

}  // namespace dfs::client
