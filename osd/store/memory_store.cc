// MemoryStore: the in-memory ObjectStore for tests and simulation. Same semantics as the
// dir backend (validation, atomicity, zero-filled gaps), no durability. One
// reader/writer mutex; apply validates the whole transaction before changing anything.
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "osd/store/object_store.h"
#include "osd/store/op_checks.h"

namespace dfs::osd {

namespace {

class MemoryStore final : public ObjectStore {
 public:
  Status apply(Transaction txn) override;
  Result<std::string> read(const ObjectKey& key, uint64_t offset, uint64_t length) override;
  Result<ObjectInfo> stat(const ObjectKey& key) override;
  Result<std::vector<std::pair<std::string, ObjectInfo>>> list(uint32_t pool, uint32_t pg) override;
  Result<std::optional<std::string>> get_meta(const std::string& key) override;
  Result<std::vector<std::pair<std::string, std::string>>> scan_meta(
      const std::string& prefix) override;
  Result<StoreUsage> usage() override;

 private:
  struct Object {
    std::string data;
    ObjectVersion version;
  };

  Status validate(const Transaction& txn) const;
  void apply_op(Transaction::Op& op);

  mutable std::shared_mutex mu_;
  std::map<ObjectKey, Object> objects_;      // guarded by mu_
  std::map<std::string, std::string> meta_;  // guarded by mu_
};

// Replays existence through the ops: set_version needs the object at that point.
Status MemoryStore::validate(const Transaction& txn) const {
  std::map<ObjectKey, bool> exists;
  for (const Transaction::Op& op : txn.ops()) {
    DFS_TRY_STATUS(check_op_bounds(op));
    if (!is_object_op(op)) continue;
    auto [it, inserted] = exists.try_emplace(op.key, false);
    if (inserted) it->second = objects_.count(op.key) != 0;
    switch (op.type) {
      case Transaction::OpType::kRemove:
        it->second = false;
        break;
      case Transaction::OpType::kSetVersion:
        if (!it->second) return missing_object_error(op.key);
        break;
      default:
        it->second = true;
        break;
    }
  }
  return ok_status();
}

void MemoryStore::apply_op(Transaction::Op& op) {
  using OpType = Transaction::OpType;
  switch (op.type) {
    case OpType::kWrite: {
      Object& obj = objects_[op.key];
      if (obj.data.empty() && op.offset == 0) {
        obj.data = std::move(op.data);
        break;
      }
      uint64_t end = op.offset + op.data.size();
      if (obj.data.size() < end) obj.data.resize(end, '\0');
      obj.data.replace(op.offset, op.data.size(), op.data);
      break;
    }
    case OpType::kTruncate:
      objects_[op.key].data.resize(op.offset, '\0');
      break;
    case OpType::kRemove:
      objects_.erase(op.key);
      break;
    case OpType::kSetVersion:
      objects_[op.key].version = op.version;
      break;
    case OpType::kPutMeta:
      meta_[op.meta_key] = std::move(op.data);
      break;
    case OpType::kDeleteMeta:
      meta_.erase(op.meta_key);
      break;
  }
}

Status MemoryStore::apply(Transaction txn) {
  std::unique_lock lock(mu_);
  DFS_TRY_STATUS(validate(txn));
  // Nothing below can fail, so the transaction is all-or-nothing.
  std::vector<Transaction::Op> ops = std::move(txn).take_ops();
  for (Transaction::Op& op : ops) apply_op(op);
  return ok_status();
}

Result<std::string> MemoryStore::read(const ObjectKey& key, uint64_t offset, uint64_t length) {
  std::shared_lock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return make_error(ErrorCode::kNotFound, "no such object: " + key.name);
  const std::string& data = it->second.data;
  if (offset >= data.size()) return std::string();
  return data.substr(offset, length);
}

Result<ObjectInfo> MemoryStore::stat(const ObjectKey& key) {
  std::shared_lock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return make_error(ErrorCode::kNotFound, "no such object: " + key.name);
  return ObjectInfo{it->second.data.size(), it->second.version};
}

Result<std::vector<std::pair<std::string, ObjectInfo>>> MemoryStore::list(uint32_t pool,
                                                                          uint32_t pg) {
  std::shared_lock lock(mu_);
  std::vector<std::pair<std::string, ObjectInfo>> out;
  for (auto it = objects_.lower_bound(ObjectKey{pool, pg, ""});
       it != objects_.end() && it->first.pool == pool && it->first.pg == pg; ++it) {
    out.emplace_back(it->first.name, ObjectInfo{it->second.data.size(), it->second.version});
  }
  return out;
}

Result<std::optional<std::string>> MemoryStore::get_meta(const std::string& key) {
  std::shared_lock lock(mu_);
  auto it = meta_.find(key);
  if (it == meta_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::vector<std::pair<std::string, std::string>>> MemoryStore::scan_meta(
    const std::string& prefix) {
  std::shared_lock lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = meta_.lower_bound(prefix); it != meta_.end() && it->first.starts_with(prefix);
       ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

// Memory is not a device: capacity is reported as unbounded.
Result<StoreUsage> MemoryStore::usage() {
  std::shared_lock lock(mu_);
  StoreUsage out;
  out.total_bytes = std::numeric_limits<uint64_t>::max();
  out.available_bytes = std::numeric_limits<uint64_t>::max();
  for (const auto& [key, obj] : objects_) out.used_bytes += obj.data.size();
  out.object_count = objects_.size();
  return out;
}

}  // namespace

std::unique_ptr<ObjectStore> make_memory_store() { return std::make_unique<MemoryStore>(); }

}  // namespace dfs::osd
