#include "mds/service/speculation.h"

#include <algorithm>
#include <set>

#include "mds/store/keys.h"

namespace dfs::mds {
namespace {

Result<proto::MdsUndo> parse_undo(std::string_view key, std::string_view value) {
  proto::MdsUndo undo;
  if (!undo.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
      undo.keys_size() != undo.values_size() || undo.keys_size() != undo.present_size()) {
    return make_error(ErrorCode::kCorruption,
                      "undecodable undo record at key of " + std::to_string(key.size()) + " bytes");
  }
  return undo;
}

// Every undo record, oldest first.
Result<std::vector<proto::MdsUndo>> all_undo_records(const KvReader& store) {
  std::string prefix = undo_prefix();
  auto kvs = DFS_TRY(store.scan(prefix, prefix_end(prefix), SIZE_MAX));
  std::vector<proto::MdsUndo> out;
  out.reserve(kvs.size());
  for (const auto& kv : kvs) out.push_back(DFS_TRY(parse_undo(kv.key, kv.value)));
  return out;
}

}  // namespace

Status add_undo_record(const KvReader& store, uint64_t term, uint64_t first_index,
                       WriteBatch& batch) {
  proto::MdsUndo undo;
  undo.set_term(term);
  undo.set_first_index(first_index);
  std::set<std::string_view> seen;  // a GroupTxn batch names each key once; be sure
  for (const auto& op : batch.ops()) {
    if (!seen.insert(op.key).second) continue;
    auto before = DFS_TRY(store.get(op.key));
    undo.add_keys(op.key);
    undo.add_values(before ? *before : std::string());
    undo.add_present(before.has_value());
  }
  batch.put(undo_key(first_index), undo.SerializeAsString());
  return ok_status();
}

Result<std::optional<proto::MdsUndo>> oldest_undo_record(const KvReader& store) {
  std::string prefix = undo_prefix();
  auto kvs = DFS_TRY(store.scan(prefix, prefix_end(prefix), 1));
  if (kvs.empty()) return std::optional<proto::MdsUndo>();
  return std::optional<proto::MdsUndo>(DFS_TRY(parse_undo(kvs[0].key, kvs[0].value)));
}

Result<WriteBatch> roll_back_batch(const KvReader& store, size_t& groups) {
  auto records = DFS_TRY(all_undo_records(store));
  groups = records.size();
  // Newest first, so each key ends at its value before the oldest group; one batch,
  // so the store is never seen half undone.
  std::map<std::string, std::optional<std::string>> restored;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    for (int i = 0; i < it->keys_size(); ++i) {
      restored[it->keys(i)] = it->present(i) ? std::optional<std::string>(it->values(i))
                                             : std::nullopt;
    }
  }
  WriteBatch batch;
  for (auto& [key, value] : restored) {
    if (value) {
      batch.put(key, std::move(*value));
    } else {
      batch.del(key);
    }
  }
  for (const auto& record : records) batch.del(undo_key(record.first_index()));
  return batch;
}

Result<size_t> roll_back_store(MetaStore& store, bool sync) {
  size_t groups = 0;
  WriteBatch batch = DFS_TRY(roll_back_batch(store, groups));
  if (groups > 0) DFS_TRY_STATUS(store.write(batch, sync));
  return groups;
}

Status roll_back_image(std::map<std::string, std::string>& image) {
  std::string prefix = undo_prefix();
  std::vector<proto::MdsUndo> records;
  for (auto it = image.lower_bound(prefix); it != image.end() && it->first.starts_with(prefix);) {
    records.push_back(DFS_TRY(parse_undo(it->first, it->second)));
    it = image.erase(it);
  }
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    for (int i = 0; i < it->keys_size(); ++i) {
      if (it->present(i)) {
        image[it->keys(i)] = it->values(i);
      } else {
        image.erase(it->keys(i));
      }
    }
  }
  return ok_status();
}

}  // namespace dfs::mds
