#include "mds/store/group_txn.h"

#include <cstdint>

namespace dfs::mds {

const GroupTxn::Overlay::mapped_type* GroupTxn::find(std::string_view key) const {
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
  // Merged view: the overlay's values win. Each overlay key can hide at most one base
  // key, so reading `limit + overlay keys in range` base keys is always enough.
  Overlay merged;
  for (const Overlay* layer : {&group_, &entry_}) {
    for (auto it = layer->lower_bound(begin); it != layer->end() && it->first < end; ++it) {
      merged[it->first] = it->second;
    }
  }
  size_t base_limit = limit > SIZE_MAX - merged.size() ? SIZE_MAX : limit + merged.size();
  auto base = DFS_TRY(base_.scan(begin, end, base_limit));
  for (auto& kv : base) merged.try_emplace(std::move(kv.key), std::move(kv.value));
  std::vector<KeyValue> out;
  for (auto& [key, value] : merged) {
    if (out.size() >= limit) break;
    if (value) out.push_back({key, *value});
  }
  return out;
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
