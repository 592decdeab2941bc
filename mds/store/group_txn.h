// GroupTxn: the writes of one commit group, layered over a MetaStore. Each log entry
// of the group runs inside an entry scope; its reads see the store plus the writes of
// the group's earlier entries and its own, so entries of one group apply in order as
// if each had been committed alone. A failed entry's writes are dropped with
// abort_entry(). Owned by the Committer's apply task (one thread at a time).
#pragma once

#include <optional>
#include <string>

#include "mds/store/overlay.h"

namespace dfs::mds {

class GroupTxn final : public KvReader {
 public:
  explicit GroupTxn(const KvReader& base) : base_(base) {}

  Result<std::optional<std::string>> get(std::string_view key) const override;
  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override;

  void put(std::string key, std::string value) { entry_[std::move(key)] = std::move(value); }
  void del(std::string key) { entry_[std::move(key)] = std::nullopt; }

  // Entry scope. Requires: writes happen between begin_entry() and commit/abort.
  void begin_entry() { entry_.clear(); }
  void commit_entry();
  void abort_entry() { entry_.clear(); }

  // The group's writes as one batch (each key once, with its last value).
  WriteBatch batch() const;
  bool empty() const { return group_.empty(); }

 private:
  const Overlay::mapped_type* find(std::string_view key) const;

  const KvReader& base_;
  Overlay group_;
  Overlay entry_;
};

}  // namespace dfs::mds
