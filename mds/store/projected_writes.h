// ProjectedWrites: the store writes of the commit groups a replicated rank's leader has
// proposed and not yet seen settle, layered over its store, which holds committed state
// only. The leader decides each new group on this view, so that it need not wait for the
// Raft round of the group before (docs/architecture.md, "Replicated metadata ranks").
// Each write belongs to the group that made it; when a group settles (committed: the
// store has its writes now; or dropped) the writes of it that no later group replaced
// leave the view. Owned by the Committer, on its I/O thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "mds/store/overlay.h"

namespace dfs::mds {

class ProjectedWrites final : public KvReader {
 public:
  explicit ProjectedWrites(const KvReader& store) : store_(store) {}

  // The store with every added group's writes on top, the newest winning.
  Result<std::optional<std::string>> get(std::string_view key) const override {
    return get_over(store_, key);
  }
  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    return scan_over(store_, begin, end, limit);
  }
  // The same over `base`, another reader of the store (its memory-only one).
  Result<std::optional<std::string>> get_over(const KvReader& base, std::string_view key) const;
  Result<std::vector<KeyValue>> scan_over(const KvReader& base, std::string_view begin,
                                          std::string_view end, size_t limit) const;

  // Adds the writes of group `group`. Requires: `group` above every group added before.
  void add(uint64_t group, const WriteBatch& writes);
  // Group `group` settled: its writes that no later group replaced leave the view.
  void settle(uint64_t group);
  bool empty() const { return values_.empty(); }
  size_t keys() const { return values_.size(); }

 private:
  const KvReader& store_;
  Overlay values_;
  std::unordered_map<std::string, uint64_t> writer_;  // key -> the group that wrote it last
  std::map<uint64_t, std::vector<std::string>> written_;  // group -> the keys it wrote
};

// ProjectedWrites over another reader of the store: what the leader's reads see.
class ProjectedView final : public KvReader {
 public:
  ProjectedView(const ProjectedWrites& writes, const KvReader& base)
      : writes_(writes), base_(base) {}
  Result<std::optional<std::string>> get(std::string_view key) const override {
    return writes_.get_over(base_, key);
  }
  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    return writes_.scan_over(base_, begin, end, limit);
  }

 private:
  const ProjectedWrites& writes_;
  const KvReader& base_;
};

}  // namespace dfs::mds
