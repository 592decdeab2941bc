#include "mds/store/overlay.h"

#include <cstdint>

namespace dfs::mds {

Result<std::vector<KeyValue>> scan_with_overlays(const KvReader& base,
                                                 std::initializer_list<const Overlay*> layers,
                                                 std::string_view begin, std::string_view end,
                                                 size_t limit) {
  // The overlays' values win. Each overlay key can hide at most one base key, so
  // reading `limit + overlay keys in range` base keys is always enough.
  Overlay merged;
  for (const Overlay* layer : layers) {
    for (auto it = layer->lower_bound(begin); it != layer->end() && it->first < end; ++it) {
      merged[it->first] = it->second;
    }
  }
  if (merged.empty()) return base.scan(begin, end, limit);
  size_t base_limit = limit > SIZE_MAX - merged.size() ? SIZE_MAX : limit + merged.size();
  auto from_base = DFS_TRY(base.scan(begin, end, base_limit));
  for (auto& kv : from_base) merged.try_emplace(std::move(kv.key), std::move(kv.value));
  std::vector<KeyValue> out;
  for (auto& [key, value] : merged) {
    if (out.size() >= limit) break;
    if (value) out.push_back({key, *value});
  }
  return out;
}

}  // namespace dfs::mds
