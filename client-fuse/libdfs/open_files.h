// OpenFiles: the table of what this mount holds open. Two maps, each entry owned here:
//   - the state of each held regular file (FileState) by inode: from the file's first
//     open here until its state is dropped (linger after the last close, with nothing
//     buffered or on its way);
//   - each open handle (Handle) by the number the kernel gets for it.
// And the opens that may write which this mount sent to the MDS: a read share the MDS
// answered to a request is taken up only if no such open was sent since that request,
// nor was in flight when it went (the MDS ends this mount's share when it serves one).
//
// What the entries mean (buffered writes, pushes, linger, the MDS open a state holds) is
// the FileClient's business; this table only keeps them, hands out handle numbers and
// says which handle is no longer usable (its file's writes were lost to an eviction).
// Owned by the FileClient, on its I/O thread.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "client-fuse/libdfs/file_state.h"
#include "common/status/status.h"

namespace dfs::client {

using Ino = uint64_t;
using Fh = uint64_t;

class OpenFiles {
 public:
  using States = std::unordered_map<Ino, std::shared_ptr<FileState>>;
  using Handles = std::unordered_map<Fh, std::shared_ptr<Handle>>;

  // --- held files ---
  // The held state of `ino`; null when none.
  std::shared_ptr<FileState> held(Ino ino) const;
  // A new, empty state for `ino`, held from now on. Requires: none held for `ino`.
  std::shared_ptr<FileState> hold(Ino ino);
  // `st` is held no more. False (and nothing changes) when the table holds another
  // state for its inode, or none: a state that was replaced meanwhile (an eviction
  // removed it, a new open made another) stays out.
  bool drop(const std::shared_ptr<FileState>& st);
  // Removes and returns every held state `lost` selects (an eviction's lost files).
  template <class Pred>
  std::vector<std::shared_ptr<FileState>> drop_if(Pred lost);
  // Every held state, for a loop that does not await (the map may change across an await).
  const States& states() const { return states_; }
  // The held states `pick` selects, copied: for loops that await on each.
  template <class Pred>
  std::vector<std::shared_ptr<FileState>> states_where(Pred pick) const;
  // Whether any held state satisfies `pred`.
  template <class Pred>
  bool any_state(Pred pred) const {
    for (const auto& [ino, st] : states_) {
      if (pred(*st)) return true;
    }
    return false;
  }

  // --- handles ---
  // Enters `h` under a new number (never reused within the mount's life). Requires: h.
  Fh add(std::shared_ptr<Handle> h);
  // The handle `fh`, usable. Errors: kInvalidArgument (no such handle), kFenced (its
  // file had writes that the eviction of this mount's session lost).
  Result<std::shared_ptr<Handle>> handle(Fh fh) const;
  // The handle `fh` whatever its state; null when none.
  std::shared_ptr<Handle> find(Fh fh) const;
  // The handle `fh`, which the caller just added. Requires: it is in the table.
  Handle& at(Fh fh) const { return *handles_.at(fh); }
  // Removes the handle `fh` and returns it; null when none.
  std::shared_ptr<Handle> remove(Fh fh);
  const Handles& handles() const { return handles_; }

  // --- opens that may write ---
  // Where the writing opens stood when a request went out.
  struct WriteOpenMark {
    uint64_t sent = 0;
    bool in_flight = false;
  };
  WriteOpenMark write_open_mark() const { return {write_opens_sent_, write_opens_in_flight_ > 0}; }
  // No writing open was sent since `mark`, and none was in flight at it.
  bool no_write_open_since(const WriteOpenMark& mark) const {
    return write_opens_sent_ == mark.sent && !mark.in_flight;
  }
  // An open that may write on its way to the MDS: counted as sent when made, in flight
  // while it lives.
  class WriteOpen {
   public:
    explicit WriteOpen(OpenFiles& files) : files_(files) {
      ++files_.write_opens_sent_;
      ++files_.write_opens_in_flight_;
    }
    ~WriteOpen() { --files_.write_opens_in_flight_; }
    WriteOpen(const WriteOpen&) = delete;
    WriteOpen& operator=(const WriteOpen&) = delete;

   private:
    OpenFiles& files_;
  };

 private:
  States states_;
  Handles handles_;
  Fh next_fh_ = 1;
  uint64_t write_opens_sent_ = 0;
  uint32_t write_opens_in_flight_ = 0;
};

template <class Pred>
std::vector<std::shared_ptr<FileState>> OpenFiles::drop_if(Pred lost) {
  std::vector<std::shared_ptr<FileState>> out;
  for (auto it = states_.begin(); it != states_.end();) {
    if (lost(*it->second)) {
      out.push_back(std::move(it->second));
      it = states_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

template <class Pred>
std::vector<std::shared_ptr<FileState>> OpenFiles::states_where(Pred pick) const {
  std::vector<std::shared_ptr<FileState>> out;
  for (const auto& [ino, st] : states_) {
    if (pick(*st)) out.push_back(st);
  }
  return out;
}

}  // namespace dfs::client
