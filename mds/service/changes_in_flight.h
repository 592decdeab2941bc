// ChangesInFlight: the inodes that requests being served change (RequestNames: a
// setattr's, an xattr change's, a link's or a write's inode, the directories a name is
// added to or removed from, the inodes a removed or moved name holds), each counted from
// before the request's claims until it has applied. No inode is given or shared with a
// session while a change of it is in flight: the grant reads the inode, and the change
// would land after that read (docs/capabilities.md, "File rights", "Read shares").
//
// Owned by the MdsService on its I/O thread (the rights simulation keeps one per MDS
// instance); no locking.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dfs::mds {

class ChangesInFlight {
 public:
  // Changes counted for the lifetime of this value. Must not outlive the
  // ChangesInFlight.
  class Counted {
   public:
    Counted(Counted&& other) noexcept : owner_(other.owner_), inos_(std::move(other.inos_)) {
      other.inos_.clear();
    }
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    Counted& operator=(Counted&&) = delete;
    ~Counted() {
      for (uint64_t ino : inos_) {
        auto it = owner_.counts_.find(ino);
        if (--it->second == 0) owner_.counts_.erase(it);
      }
      if (!inos_.empty()) ++owner_.finished_;
    }
    // Counts a change of `ino` too; 0 counts nothing.
    void add(uint64_t ino) {
      if (ino == 0) return;
      ++owner_.counts_[ino];
      inos_.push_back(ino);
    }

   private:
    friend class ChangesInFlight;
    explicit Counted(ChangesInFlight& owner) : owner_(owner) {}
    ChangesInFlight& owner_;
    std::vector<uint64_t> inos_;
  };

  // Counts nothing until add() is called (a batch's group adds as it resolves).
  [[nodiscard]] Counted counter() { return Counted(*this); }
  // Counts a change of `ino` until the result is destroyed; 0 counts nothing.
  [[nodiscard]] Counted count(uint64_t ino) {
    Counted counted(*this);
    counted.add(ino);
    return counted;
  }
  // The same for each of `inos`.
  [[nodiscard]] Counted count(const std::vector<uint64_t>& inos) {
    Counted counted(*this);
    for (uint64_t ino : inos) counted.add(ino);
    return counted;
  }
  // Whether a change of `ino` is in flight.
  bool any(uint64_t ino) const { return counts_.count(ino) > 0; }
  // How many changes have finished so far. A grant that read an inode while this moved
  // may have read it before one of them landed: nothing tells which inode it changed
  // once it is no longer counted, so the grant is not given.
  uint64_t finished() const { return finished_; }

 private:
  std::unordered_map<uint64_t, uint32_t> counts_;
  uint64_t finished_ = 0;
};

}  // namespace dfs::mds
