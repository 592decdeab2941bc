#include "mds/store/projected_writes.h"

namespace dfs::mds {

Result<std::optional<std::string>> ProjectedWrites::get_over(const KvReader& base,
                                                             std::string_view key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  return base.get(key);
}

Result<std::vector<KeyValue>> ProjectedWrites::scan_over(const KvReader& base,
                                                         std::string_view begin,
                                                         std::string_view end,
                                                         size_t limit) const {
  return scan_with_overlays(base, {&values_}, begin, end, limit);
}

void ProjectedWrites::add(uint64_t group, const WriteBatch& writes) {
  auto& keys = written_[group];
  keys.reserve(writes.ops().size());
  for (const auto& op : writes.ops()) {
    if (op.is_delete) {
      values_[op.key] = std::nullopt;
    } else {
      values_[op.key] = op.value;
    }
    writer_[op.key] = group;
    keys.push_back(op.key);
  }
}

void ProjectedWrites::settle(uint64_t group) {
  auto it = written_.find(group);
  if (it == written_.end()) return;
  for (const auto& key : it->second) {
    auto writer = writer_.find(key);
    if (writer == writer_.end() || writer->second != group) continue;  // a later group's now
    writer_.erase(writer);
    values_.erase(key);
  }
  written_.erase(it);
}

}  // namespace dfs::mds
