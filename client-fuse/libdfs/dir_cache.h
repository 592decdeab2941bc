// DirCache: the complete list of names of each directory this client created, or listed
// whole while alone on it, with the inode each names where this client learned it.
// While the client is alone on such a directory every later change to it passes through
// this client, so a name missing from it does not exist and lookups of it (rsync, tar
// and make probe many) are answered without a round trip to the MDS, and changes of its
// names can be answered here and deferred (deferred_namespace.cc). A directory whose
// state became uncertain (an operation in it failed) is forgotten, never guessed; the
// owner forgets the directories it is no longer alone on.
// Owned by the FileClient on its I/O thread; pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dfs::client {

class DirCache {
 public:
  // `max_names` bounds memory: past it, everything is forgotten.
  explicit DirCache(size_t max_names = 2u << 20) : max_names_(max_names) {}

  // A directory that was just created (empty).
  void created(uint64_t dir);

  // A listing of `dir` from its start, batch after batch (readdir), teaches its names:
  // when each batch continues where the one before ended, and `stamp` (what could have
  // changed the directory meanwhile, in the owner's terms: changes of its own whose
  // effect it learns only from their replies, and the rights it holds) is the same at
  // every batch, the names are complete at the batch that ends the listing. A tracked
  // directory learns nothing from a listing (it knows its names already).
  struct ListingStamp {
    uint64_t changes = 0;
    uint64_t rights_generation = 0;
    bool operator==(const ListingStamp&) const = default;
  };
  struct ListedName {
    std::string name;
    uint64_t ino = 0;
  };
  // One batch of `dir`'s listing, asked for at `cookie` (0: the start), ending at
  // `next_cookie` (where the listing continues) or at the directory's end (`eof`).
  // Returns whether `dir` is tracked now.
  bool listed(uint64_t dir, uint64_t cookie, const ListingStamp& stamp,
              std::vector<ListedName> names, uint64_t next_cookie, bool eof);
  // A listing of `dir` under way teaches nothing (its batches cannot be trusted).
  void listing_interrupted(uint64_t dir) { partial_.erase(dir); }
  // Listings begun and not finished (a reader that stops early leaves one behind).
  size_t partial_listings() const { return partial_.size(); }
  // Whether `name` exists in `dir`; nullopt when the directory is not tracked.
  std::optional<bool> contains(uint64_t dir, const std::string& name) const;
  // The inode `name` in `dir` refers to; nullopt when the directory is not tracked, the
  // name is absent, or its inode was not learned (added with ino 0).
  std::optional<uint64_t> ino_of(uint64_t dir, const std::string& name) const;
  void added(uint64_t dir, const std::string& name, uint64_t ino = 0);
  // Whether `dir` has no names; nullopt when it is not tracked.
  std::optional<bool> empty(uint64_t dir) const;
  void removed(uint64_t dir, const std::string& name);
  // Stops tracking `dir` (removed, forgotten by the kernel, or its state uncertain).
  void forget(uint64_t dir);
  // Keeps tracking only the directories `keep` says yes to.
  template <class Pred>
  void retain_if(Pred keep) {
    for (auto it = dirs_.begin(); it != dirs_.end();) {
      if (keep(it->first)) {
        ++it;
      } else {
        names_ -= it->second.size();
        it = dirs_.erase(it);
      }
    }
    std::erase_if(partial_, [&keep](const auto& entry) { return !keep(entry.first); });
  }
  // Stops tracking every directory (the session that kept them exact was evicted).
  void clear() {
    dirs_.clear();
    partial_.clear();
    names_ = 0;
  }

  size_t dirs() const { return dirs_.size(); }
  size_t names() const { return names_; }

 private:
  size_t max_names_;
  size_t names_ = 0;
  std::unordered_map<uint64_t, std::unordered_map<std::string, uint64_t>> dirs_;
  // Listings under way: the names so far, where the next batch must start, the stamp,
  // and when the listing started (the oldest goes first when there are too many).
  struct Partial {
    ListingStamp stamp;
    uint64_t next_cookie = 0;
    std::unordered_map<std::string, uint64_t> names;
    uint64_t started = 0;
  };
  static constexpr size_t kMaxPartialListings = 64;
  uint64_t listings_started_ = 0;
  std::unordered_map<uint64_t, Partial> partial_;
};

}  // namespace dfs::client
