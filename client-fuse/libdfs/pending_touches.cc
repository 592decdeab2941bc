#include "client-fuse/libdfs/pending_touches.h"

#include <cstring>

namespace dfs::client {

std::string PendingTouches::key(uint64_t dir, std::string_view name) {
  std::string out(sizeof(dir), '\0');
  std::memcpy(out.data(), &dir, sizeof(dir));
  out.append(name);
  return out;
}

template <class Map, class K>
void PendingTouches::count(Map& map, const K& k, bool up) {
  if (up) {
    ++map[k];
    return;
  }
  auto it = map.find(k);
  if (it != map.end() && --it->second == 0) map.erase(it);
}

void PendingTouches::add(const Change& change) {
  for (uint64_t dir : change.dirs) count(dirs_, dir, true);
  for (uint64_t ino : change.inodes) count(inodes_, ino, true);
  for (const Name& n : change.names) count(names_, key(n.dir, n.name), true);
}

void PendingTouches::remove(const Change& change) {
  for (uint64_t dir : change.dirs) count(dirs_, dir, false);
  for (uint64_t ino : change.inodes) count(inodes_, ino, false);
  for (const Name& n : change.names) count(names_, key(n.dir, n.name), false);
}

}  // namespace dfs::client
