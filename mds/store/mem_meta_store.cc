// MemMetaStore: MetaStore on a std::map, for unit tests and simulation. Every write is
// "durable" at once; a shared mutex lets pool threads read while the writer writes.
#include <map>
#include <mutex>
#include <shared_mutex>

#include "mds/store/meta_store.h"

namespace dfs::mds {
namespace {

class MemMetaStore final : public MetaStore {
 public:
  Result<std::optional<std::string>> get(std::string_view key) const override {
    std::shared_lock lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }

  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    std::shared_lock lock(mu_);
    std::vector<KeyValue> out;
    for (auto it = map_.lower_bound(begin); it != map_.end() && out.size() < limit; ++it) {
      if (std::string_view(it->first) >= end) break;
      out.push_back({it->first, it->second});
    }
    return out;
  }

  Status write(const WriteBatch& batch, bool /*sync*/) override {
    std::unique_lock lock(mu_);
    for (const auto& op : batch.ops()) {
      if (op.is_delete) {
        map_.erase(op.key);
      } else {
        map_[op.key] = op.value;
      }
    }
    return ok_status();
  }

  Status sync() override { return ok_status(); }
  const KvReader& memory_reader() const override { return *this; }

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::string, std::less<>> map_;  // DFS_GUARDED_BY(mu_)
};

}  // namespace

std::unique_ptr<MetaStore> make_mem_meta_store() { return std::make_unique<MemMetaStore>(); }

}  // namespace dfs::mds
