#include "client-fuse/libdfs/walk_ahead.h"

#include <sys/stat.h>

#include "client-fuse/libdfs/file_state.h"

namespace dfs::client {

WalkAhead::WalkAhead(asio::any_io_executor executor, FetchListing fetch_listing, ObjectIo& io,
                     Options options, std::function<uint64_t()> changes)
    : executor_(executor),
      fetch_listing_(std::move(fetch_listing)),
      io_(io),
      options_(options),
      changes_(std::move(changes)),
      listings_(options.prefetch_listings),
      data_(options.data_ahead_bytes),
      listing_arrived_(executor) {
  listing_arrived_.expires_at(asio::steady_timer::time_point::max());
}

proto::ReaddirRequest WalkAhead::request(uint64_t dir, uint64_t cookie, uint32_t max_entries,
                                         bool plus, uint32_t inline_max) {
  proto::ReaddirRequest request;
  request.set_ino(dir);
  request.set_cookie(cookie);
  request.set_max_entries(max_entries);
  request.set_plus(plus);
  if (plus) request.set_inline_max(inline_max);
  return request;
}

ListingPrefetch::Question WalkAhead::question(const Creds& creds, uint32_t max_entries) const {
  return ListingPrefetch::Question{creds.uid, creds.gid, max_entries, changes_()};
}

awaitable<std::optional<proto::ReaddirReply>> WalkAhead::fetched_listing(uint64_t dir,
                                                                          const Creds& creds,
                                                                          uint32_t max_entries) {
  for (;;) {
    if (stopped_) co_return std::nullopt;
    // Asked again after every wait: a change made meanwhile makes the listing stale.
    auto asked = question(creds, max_entries);
    switch (listings_.state(dir, asked)) {
      case ListingPrefetch::State::kReady:
        co_return listings_.take(dir, asked);
      case ListingPrefetch::State::kInFlight:
        co_await listing_arrived_.async_wait(use_awaitable_tuple);
        break;
      case ListingPrefetch::State::kAbsent:
        listings_.take(dir, asked);  // drops a stale one
        co_return std::nullopt;
    }
  }
}

void WalkAhead::walk_listed(const Creds& creds, uint32_t max_entries,
                            const proto::ReaddirReply& reply) {
  const auto asked = question(creds, max_entries);
  for (const auto& e : reply.entries()) {
    if (!is_dot(e.name()) && S_ISDIR(e.type()) && e.ino() != 0) listings_.want(e.ino(), asked);
  }
  start_listings();
}

void WalkAhead::start_listings() {
  if (stopped_) return;
  while (auto fetch = listings_.next(changes_())) {
    spawn_checked(executor_, fetch_listing(*fetch));
  }
}

awaitable<void> WalkAhead::fetch_listing(ListingPrefetch::Fetch fetch) {
  Creds creds;
  creds.uid = fetch.question.uid;
  creds.gid = fetch.question.gid;
  auto reply = co_await fetch_listing_(fetch.dir, creds, fetch.question.max_entries);
  if (stopped_) co_return;
  listings_.arrived(fetch.dir, std::move(reply));
  listing_arrived_.cancel();  // wakes every walk waiting on one in flight
  start_listings();
}

bool WalkAhead::wants_data(const proto::Inode& inode) const {
  return data_.enabled() && S_ISREG(inode.mode()) && !inode.inline_();
}

void WalkAhead::want_data(const proto::Inode& inode, const StripeLayout& layout) {
  data_.want({inode.ino(), inode.version(), inode.size(), layout});
}

void WalkAhead::start_data() {
  if (stopped_) return;
  while (auto fetch = data_.next()) spawn_checked(executor_, fetch_data(*fetch));
}

awaitable<void> WalkAhead::fetch_data(DataAhead::Fetch fetch) {
  // A state of its own: a read only needs the layout.
  auto st = std::make_shared<FileState>(fetch.file.ino);
  st->layout = fetch.file.layout;
  st->size = fetch.file.size;
  fetch.piece->data = co_await io_.read(st, 0, fetch.file.size, false);
  fetch.piece->done.set();
  data_.finished(fetch.file.ino);
  start_data();
}

std::shared_ptr<Prefetch> WalkAhead::take_data(uint64_t ino, uint64_t version) {
  auto piece = data_.take(ino, version);
  if (piece) start_data();  // its bytes and credits are free again
  return piece;
}

void WalkAhead::stop() {
  stopped_ = true;
  listing_arrived_.cancel();
}

}  // namespace dfs::client
