#include "client-fuse/libdfs/data_ahead.h"

#include <algorithm>

namespace dfs::client {

namespace {
constexpr size_t kMaxQueued = 4096;  // listed but not fetched yet; the oldest go first
}  // namespace

void DataAhead::want(const File& file) {
  if (!enabled() || file.size == 0 || file.size > kMaxFileBytes) return;
  if (queued_.count(file.ino) || held_.count(file.ino)) return;
  if (queue_.size() >= kMaxQueued) {
    queued_.erase(queue_.front().ino);
    queue_.pop_front();
  }
  queue_.push_back(file);
  queued_.insert(file.ino);
}

bool DataAhead::make_room(uint64_t bytes) {
  while (bytes_ + bytes > max_bytes_ && !held_order_.empty()) {
    auto [ino, order] = held_order_.front();
    auto it = held_.find(ino);
    if (it == held_.end() || it->second.order != order) {
      held_order_.pop_front();  // taken or dropped since
      continue;
    }
    if (in_flight_.count(ino)) return false;  // the oldest is still coming: wait for it
    held_order_.pop_front();
    forget(it);
  }
  return bytes_ + bytes <= max_bytes_;
}

std::optional<DataAhead::Fetch> DataAhead::next() {
  while (!queue_.empty()) {
    const File& file = queue_.front();
    if (!queued_.count(file.ino)) {  // dropped while queued
      queue_.pop_front();
      continue;
    }
    if (credits_ <= 0 || in_flight_.size() >= kMaxInFlight || !make_room(file.size)) {
      return std::nullopt;
    }
    Fetch fetch{file, std::make_shared<Prefetch>()};
    fetch.piece->offset = 0;
    fetch.piece->length = file.size;
    queued_.erase(file.ino);
    queue_.pop_front();
    Held& held = held_[fetch.file.ino];
    held.version = fetch.file.version;
    held.order = next_order_++;
    held.piece = fetch.piece;
    held_order_.emplace_back(fetch.file.ino, held.order);
    bytes_ += fetch.file.size;
    in_flight_.insert(fetch.file.ino);
    --credits_;
    ++fetched_;
    return fetch;
  }
  return std::nullopt;
}

void DataAhead::finished(uint64_t ino) { in_flight_.erase(ino); }

std::shared_ptr<Prefetch> DataAhead::take(uint64_t ino, uint64_t version) {
  auto it = held_.find(ino);
  if (it == held_.end()) return nullptr;
  std::shared_ptr<Prefetch> piece = it->second.version == version ? it->second.piece : nullptr;
  forget(it);
  if (piece) {
    ++used_;
    credits_ = std::min(credits_ + kCreditsPerUse, kMaxCredits);
  }
  return piece;
}

void DataAhead::drop(uint64_t ino) {
  queued_.erase(ino);  // its queue entry is skipped later
  if (auto it = held_.find(ino); it != held_.end()) forget(it);
}

void DataAhead::forget(std::unordered_map<uint64_t, Held>::iterator it) {
  bytes_ -= it->second.piece->length;
  held_.erase(it);
  if (held_order_.size() > 2 * held_.size() + 1024) {
    std::erase_if(held_order_, [this](const auto& place) {
      auto h = held_.find(place.first);
      return h == held_.end() || h->second.order != place.second;
    });
  }
}

}  // namespace dfs::client
