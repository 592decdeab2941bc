#include "client-fuse/libdfs/listing_prefetch.h"

#include <algorithm>

namespace dfs::client {

ListingPrefetch::ListingPrefetch(size_t max_in_flight, size_t max_held_bytes, size_t max_queued)
    : max_in_flight_(max_in_flight), max_held_bytes_(max_held_bytes), max_queued_(max_queued) {}

void ListingPrefetch::want(uint64_t dir, const Question& question) {
  if (!enabled() || queue_.size() >= max_queued_) return;
  if (auto h = held_.find(dir); h != held_.end()) {
    if (!h->second.ready || h->second.question == question) return;  // in flight, or good
    drop(dir);  // went stale: fetch it again
  }
  if (!queued_.insert(dir).second) return;
  queue_.push_back(Fetch{dir, question});
}

std::optional<ListingPrefetch::Fetch> ListingPrefetch::next(uint64_t changes) {
  while (in_flight_ < max_in_flight_ && !queue_.empty()) {
    Fetch f = queue_.front();
    queue_.pop_front();
    queued_.erase(f.dir);
    f.question.changes = changes;
    held_[f.dir].question = f.question;
    flying_.insert(f.dir);
    ++in_flight_;
    return f;
  }
  return std::nullopt;
}

void ListingPrefetch::arrived(uint64_t dir, Result<proto::ReaddirReply> reply) {
  --in_flight_;
  flying_.erase(dir);
  auto it = held_.find(dir);
  if (it == held_.end() || it->second.ready) return;
  if (!reply) {
    held_.erase(it);
    return;
  }
  ++fetched_;
  Held& h = it->second;
  bool reached_in_flight = h.stale;
  for (const auto& e : reply->entries()) {
    if (!is_dot(e.name()) && h.touched_in_flight.count(e.ino())) reached_in_flight = true;
  }
  if (reached_in_flight) {
    held_.erase(it);
    return;
  }
  h.touched_in_flight.clear();
  h.ready = true;
  h.reply = std::move(*reply);
  for (const auto& e : h.reply.entries()) {
    if (!is_dot(e.name())) shown_in_.emplace(e.ino(), dir);
  }
  h.bytes = h.reply.ByteSizeLong();
  h.order = next_order_++;
  held_bytes_ += h.bytes;
  ages_.emplace_back(dir, h.order);
  if (ages_.size() > 2 * held_.size() + 1024) {
    // Most were taken: forget their places.
    std::erase_if(ages_, [this](const auto& age) {
      auto o = held_.find(age.first);
      return o == held_.end() || !o->second.ready || o->second.order != age.second;
    });
  }
  while (held_bytes_ > max_held_bytes_ && !ages_.empty()) {
    auto [oldest, order] = ages_.front();
    ages_.pop_front();
    auto o = held_.find(oldest);
    if (o != held_.end() && o->second.ready && o->second.order == order) drop(oldest);
  }
}

void ListingPrefetch::touched(const std::vector<uint64_t>& dirs,
                              const std::vector<uint64_t>& inodes) {
  if (held_.empty()) return;
  for (const auto* list : {&dirs, &inodes}) {
    for (uint64_t ino : *list) {
      std::vector<uint64_t> showing;
      auto [first, last] = shown_in_.equal_range(ino);
      for (auto it = first; it != last; ++it) showing.push_back(it->second);
      for (uint64_t dir : showing) reached(dir);
      for (uint64_t dir : flying_) held_[dir].touched_in_flight.insert(ino);
    }
  }
  for (uint64_t dir : dirs) reached(dir);
}

void ListingPrefetch::forget_all() {
  for (uint64_t dir : flying_) held_[dir].stale = true;
  std::erase_if(held_, [](const auto& h) { return h.second.ready; });
  shown_in_.clear();
  ages_.clear();
  held_bytes_ = 0;
}

void ListingPrefetch::reached(uint64_t dir) {
  auto it = held_.find(dir);
  if (it == held_.end()) return;
  if (it->second.ready) {
    drop(dir);
  } else {
    it->second.stale = true;
  }
}

ListingPrefetch::State ListingPrefetch::state(uint64_t dir, const Question& question) const {
  auto it = held_.find(dir);
  if (it == held_.end() || it->second.stale || !(it->second.question == question)) {
    return State::kAbsent;
  }
  return it->second.ready ? State::kReady : State::kInFlight;
}

std::optional<proto::ReaddirReply> ListingPrefetch::take(uint64_t dir, const Question& question) {
  auto it = held_.find(dir);
  if (it == held_.end() || !it->second.ready) return std::nullopt;
  if (!(it->second.question == question)) {
    drop(dir);  // stale (something changed since) or asked by someone else: never used
    return std::nullopt;
  }
  ++hits_;
  for (const auto& e : it->second.reply.entries()) unshow(e.ino(), dir);
  proto::ReaddirReply reply = std::move(it->second.reply);
  drop(dir);  // nothing left to unshow
  return reply;
}

void ListingPrefetch::drop(uint64_t dir) {
  auto it = held_.find(dir);
  if (it == held_.end()) return;
  for (const auto& e : it->second.reply.entries()) unshow(e.ino(), dir);
  held_bytes_ -= it->second.bytes;
  held_.erase(it);
}

void ListingPrefetch::unshow(uint64_t ino, uint64_t dir) {
  auto [first, last] = shown_in_.equal_range(ino);
  for (auto it = first; it != last; ++it) {
    if (it->second == dir) {
      shown_in_.erase(it);
      return;
    }
  }
}

}  // namespace dfs::client
