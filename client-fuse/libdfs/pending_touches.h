// PendingTouches: what this mount's deferred changes name, each counted from the moment
// the mount answers the change until the MDS answers it: the directories whose names
// they change, the inodes they change (a create's new inode, a rename's moved one, an
// unlinked one), and the names they add, remove or move. A read none of them names (a
// listing of a directory whose names and entries they leave alone, a lookup of a name
// they leave alone) shows the same before and after they apply, so it may go to the MDS
// alone, ahead of them, instead of waiting for their commit.
//
// Attribute changes merged outside the queue (KnownInodes::attrs_pending) are not
// counted here. Pure state, owned by the FileClient on its I/O thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dfs::client {

class PendingTouches {
 public:
  struct Name {
    uint64_t dir = 0;
    std::string name;
  };
  struct Change {
    std::vector<uint64_t> dirs;    // whose names change (a created one's own included)
    std::vector<uint64_t> inodes;  // changed, created or removed
    std::vector<Name> names;       // added, removed or moved
  };

  // A change was answered here (a name twice counts twice).
  void add(const Change& change);
  // The MDS answered it (applied or refused), or it was dropped with the session.
  void remove(const Change& change);

  // Whether a change not answered by the MDS yet names `ino` as a directory or an inode.
  bool touched(uint64_t ino) const { return dirs_.count(ino) > 0 || changed(ino); }
  // Whether one changes, creates or removes the inode `ino`.
  bool changed(uint64_t ino) const { return inodes_.count(ino) > 0; }
  // Whether one adds, removes or moves `name` in `dir`.
  bool named(uint64_t dir, std::string_view name) const {
    return names_.count(key(dir, name)) > 0;
  }

 private:
  static std::string key(uint64_t dir, std::string_view name);
  template <class Map, class K>
  static void count(Map& map, const K& k, bool up);

  std::unordered_map<uint64_t, uint32_t> dirs_;
  std::unordered_map<uint64_t, uint32_t> inodes_;
  std::unordered_map<std::string, uint32_t> names_;  // key(): the directory, then the name
};

}  // namespace dfs::client
