// ChangesInFlight: the inodes that requests being served change without an open of them
// (a setattr, an xattr change, a link, a write's commit: RequestNames::changed_ino),
// each counted from before the request's claims until it has applied. No file is given
// to a session while a change of it is in flight: the grant reads the inode, and the
// change would land after that read (docs/capabilities.md, "File rights").
//
// Owned by the MdsService on its I/O thread (the rights simulation keeps one per MDS
// instance); no locking.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace dfs::mds {

class ChangesInFlight {
 public:
  // One change counted for its lifetime. Must not outlive the ChangesInFlight.
  class Counted {
   public:
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    ~Counted() {
      if (ino_ == 0) return;
      auto it = owner_.counts_.find(ino_);
      if (--it->second == 0) owner_.counts_.erase(it);
    }

   private:
    friend class ChangesInFlight;
    Counted(ChangesInFlight& owner, uint64_t ino) : owner_(owner), ino_(ino) {
      if (ino_ != 0) ++owner_.counts_[ino_];
    }
    ChangesInFlight& owner_;
    uint64_t ino_;
  };

  // Counts a change of `ino` until the result is destroyed; 0 counts nothing.
  [[nodiscard]] Counted count(uint64_t ino) { return Counted(*this, ino); }
  // Whether a change of `ino` is in flight.
  bool any(uint64_t ino) const { return counts_.count(ino) > 0; }

 private:
  std::unordered_map<uint64_t, uint32_t> counts_;
};

}  // namespace dfs::mds
