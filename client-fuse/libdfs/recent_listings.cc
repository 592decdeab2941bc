#include "client-fuse/libdfs/recent_listings.h"

#include <algorithm>

namespace dfs::client {

void RecentListings::keep(uint64_t dir, const Question& question, uint64_t changes,
                          const proto::ReaddirReply& reply) {
  if (max_dirs_ == 0) return;
  // What was kept of `dir` is replaced; whatever was kept at another counter value is
  // stale (the counter only grows): a small bound suffices.
  std::erase_if(kept_, [&](const Kept& k) { return k.dir == dir || k.changes != changes; });
  while (kept_.size() >= max_dirs_) kept_.pop_front();
  Kept k{dir, question, changes, reply};
  for (auto& e : *k.reply.mutable_entries()) {
    if (!e.inline_data_included()) continue;
    e.mutable_inode()->clear_inline_data();
    e.set_inline_data_included(false);
  }
  kept_.push_back(std::move(k));
}

std::optional<proto::ReaddirReply> RecentListings::find(uint64_t dir, const Question& question,
                                                        uint64_t changes) {
  auto it = std::find_if(kept_.begin(), kept_.end(), [dir](const Kept& k) { return k.dir == dir; });
  if (it == kept_.end()) return std::nullopt;
  if (it->changes != changes) {
    kept_.erase(it);
    return std::nullopt;
  }
  if (it->question != question) return std::nullopt;
  return it->reply;
}

}  // namespace dfs::client
