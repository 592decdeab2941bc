#include "mds/store/group_txn.h"

namespace dfs::mds {

const Overlay::mapped_type* GroupTxn::find(std::string_view key) const {
  if (auto it = entry_.find(key); it != entry_.end()) return &it->second;
  if (auto it = group_.find(key); it != group_.end()) return &it->second;
  return nullptr;
}

Result<std::optional<std::string>> GroupTxn::get(std::string_view key) const {
  if (const auto* pending = find(key)) return *pending;
  return base_.get(key);
}

Result<std::vector<KeyValue>> GroupTxn::scan(std::string_view begin, std::string_view end,
                                             size_t limit) const {
  return scan_with_overlays(base_, {&group_, &entry_}, begin, end, limit);
}

void GroupTxn::commit_entry() {
  for (auto& [key, value] : entry_) group_[key] = std::move(value);
  entry_.clear();
}

WriteBatch GroupTxn::batch() const {
  WriteBatch batch;
  for (const auto& [key, value] : group_) {
    if (value) {
      batch.put(key, *value);
    } else {
      batch.del(key);
    }
  }
  return batch;
}

}  // namespace dfs::mds
