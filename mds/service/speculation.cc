#include "mds/service/speculation.h"

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

// The undo records of the groups `first_indexes` names, oldest first.
Result<std::vector<proto::MdsUndo>> undo_records(const KvReader& store,
                                                 const std::vector<uint64_t>& first_indexes) {
  std::vector<proto::MdsUndo> out;
  out.reserve(first_indexes.size());
  for (uint64_t first : first_indexes) {
    std::string key = undo_key(first);
    auto value = DFS_TRY(store.get(key));
    if (!value) {
      return make_error(ErrorCode::kCorruption,
                        "no undo record for the speculative group at index " + std::to_string(first));
    }
    out.push_back(DFS_TRY(parse_undo(key, *value)));
  }
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

Status UndoLedger::load(const KvReader& store) {
  std::string prefix = undo_prefix();
  auto kvs = DFS_TRY(store.scan(prefix, prefix_end(prefix), SIZE_MAX));
  std::lock_guard lock(mu_);
  groups_.clear();
  for (const auto& kv : kvs) {
    auto undo = DFS_TRY(parse_undo(kv.key, kv.value));
    groups_[undo.first_index()] = undo.term();
  }
  return ok_status();
}

void UndoLedger::add(uint64_t first_index, uint64_t term) {
  std::lock_guard lock(mu_);
  groups_[first_index] = term;
}

std::optional<std::pair<uint64_t, uint64_t>> UndoLedger::oldest() const {
  std::lock_guard lock(mu_);
  if (groups_.empty()) return std::nullopt;
  return *groups_.begin();
}

std::vector<uint64_t> UndoLedger::take_through(uint64_t last) {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> out;
  while (!groups_.empty() && groups_.begin()->first <= last) {
    out.push_back(groups_.begin()->first);
    groups_.erase(groups_.begin());
  }
  return out;
}

std::vector<uint64_t> UndoLedger::all() const {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> out;
  for (const auto& [first, term] : groups_) out.push_back(first);
  return out;
}

void UndoLedger::clear() {
  std::lock_guard lock(mu_);
  groups_.clear();
}

Result<WriteBatch> roll_back_batch(const KvReader& store, const UndoLedger& ledger) {
  auto records = DFS_TRY(undo_records(store, ledger.all()));
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

Result<size_t> roll_back_store(MetaStore& store, UndoLedger& ledger, bool sync) {
  size_t groups = ledger.all().size();
  if (groups == 0) return size_t{0};
  WriteBatch batch = DFS_TRY(roll_back_batch(store, ledger));
  DFS_TRY_STATUS(store.write(batch, sync));
  ledger.clear();
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
