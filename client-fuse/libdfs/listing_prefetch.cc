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
    ++in_flight_;
    return f;
  }
  return std::nullopt;
}

void ListingPrefetch::arrived(uint64_t dir, Result<proto::ReaddirReply> reply) {
  --in_flight_;
  auto it = held_.find(dir);
  if (it == held_.end() || it->second.ready) return;
  if (!reply) {
    held_.erase(it);
    return;
  }
  ++fetched_;
  Held& h = it->second;
  h.ready = true;
  h.reply = std::move(*reply);
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

ListingPrefetch::State ListingPrefetch::state(uint64_t dir, const Question& question) const {
  auto it = held_.find(dir);
  if (it == held_.end() || !(it->second.question == question)) return State::kAbsent;
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
  proto::ReaddirReply reply = std::move(it->second.reply);
  drop(dir);
  return reply;
}

void ListingPrefetch::drop(uint64_t dir) {
  auto it = held_.find(dir);
  if (it == held_.end()) return;
  held_bytes_ -= it->second.bytes;
  held_.erase(it);
}

}  // namespace dfs::client
