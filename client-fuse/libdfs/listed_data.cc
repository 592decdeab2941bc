#include "client-fuse/libdfs/listed_data.h"

#include <algorithm>

namespace dfs::client {

void ListedData::remember(uint64_t ino, uint64_t version, std::string data) {
  drop(ino);
  while (bytes_ + data.size() > max_bytes_ && !order_.empty()) {
    auto [oldest, order] = order_.front();
    order_.pop_front();
    auto it = kept_.find(oldest);
    if (it != kept_.end() && it->second.order == order) drop(oldest);
  }
  if (order_.size() > 2 * kept_.size() + 1024) {
    // Most entries were taken by opens: forget their places.
    std::erase_if(order_, [this](const auto& place) {
      auto it = kept_.find(place.first);
      return it == kept_.end() || it->second.order != place.second;
    });
  }
  Kept& slot = kept_[ino];
  slot.version = version;
  slot.order = next_order_++;
  slot.data = std::move(data);
  bytes_ += slot.data.size();
  order_.emplace_back(ino, slot.order);
}

std::optional<std::string> ListedData::take(uint64_t ino, uint64_t version) {
  auto it = kept_.find(ino);
  if (it == kept_.end()) return std::nullopt;
  bytes_ -= it->second.data.size();
  std::optional<std::string> out;
  if (it->second.version == version) out = std::move(it->second.data);
  kept_.erase(it);
  return out;
}

void ListedData::drop(uint64_t ino) {
  auto it = kept_.find(ino);
  if (it == kept_.end()) return;
  bytes_ -= it->second.data.size();
  kept_.erase(it);
}

}  // namespace dfs::client
