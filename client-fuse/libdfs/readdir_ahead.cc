// FileClient: directory listings, and what is fetched ahead of a tree walk: listings
// (listing_prefetch.h says when one may be used) and object files' data (data_ahead.h).
#include <sys/stat.h>

#include "client-fuse/libdfs/file_client.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

bool is_dot(const std::string& name) { return name == "." || name == ".."; }

}  // namespace

proto::ReaddirRequest FileClient::readdir_request(Ino ino, uint64_t cookie, uint32_t max_entries,
                                                  bool plus) const {
  proto::ReaddirRequest request;
  request.set_ino(ino);
  request.set_cookie(cookie);
  request.set_max_entries(max_entries);
  request.set_plus(plus);
  if (plus && exclusive_now()) request.set_inline_max(options_.readdir_inline_max);
  return request;
}

awaitable<Result<proto::ReaddirReply>> FileClient::readdir(Creds creds, Ino ino, uint64_t cookie,
                                                           uint32_t max_entries, bool plus) {
  // What a walk asks: a whole listing from its start, with attributes.
  const bool walk = plus && cookie == 0 && exclusive_now() && listings_.enabled();
  std::optional<proto::ReaddirReply> reply;
  if (walk) reply = co_await listing_fetched_ahead(ino, creds, max_entries);
  if (!reply) {
    DFS_CO_AWAIT_TRY(auto fetched,
                     mds_.call<proto::ReaddirReply>(rpc::kMdsReaddir,
                                                    readdir_request(ino, cookie, max_entries, plus),
                                                    creds, false));
    reply = std::move(fetched);
  }
  if (walk) {
    // A walk that changes things as it goes (rm -rf, chmod -R) would make every listing
    // fetched ahead stale before its use: only a walk that changed nothing since its
    // previous listing is served ahead.
    const uint64_t now = changes();
    if (now == changes_at_last_walk_) list_subdirs_ahead(creds, max_entries, *reply);
    changes_at_last_walk_ = now;
  }
  if (plus) {
    for (auto& e : *reply->mutable_entries()) {
      if (is_dot(e.name())) continue;
      // The kernel gets attributes only; the data waits for an open.
      if (e.inline_data_included()) remember_listed_data(*e.mutable_inode());
      learn(e.inode());
      want_data_ahead(e.inode());
      overlay(*e.mutable_inode());
    }
    start_data_ahead();
  }
  co_return std::move(*reply);
}

ListingPrefetch::Question FileClient::listing_question(const Creds& creds,
                                                       uint32_t max_entries) const {
  return ListingPrefetch::Question{creds.uid, creds.gid, max_entries, changes()};
}

awaitable<std::optional<proto::ReaddirReply>> FileClient::listing_fetched_ahead(
    Ino dir, const Creds& creds, uint32_t max_entries) {
  for (;;) {
    // Asked again after every wait: a change made meanwhile makes the listing stale.
    auto question = listing_question(creds, max_entries);
    switch (listings_.state(dir, question)) {
      case ListingPrefetch::State::kReady:
        co_return listings_.take(dir, question);
      case ListingPrefetch::State::kInFlight:
        co_await listing_arrived_.async_wait(use_awaitable_tuple);
        if (stopping_) co_return std::nullopt;
        break;
      case ListingPrefetch::State::kAbsent:
        listings_.take(dir, question);  // drops a stale one
        co_return std::nullopt;
    }
  }
}

void FileClient::list_subdirs_ahead(const Creds& creds, uint32_t max_entries,
                                    const proto::ReaddirReply& reply) {
  const auto question = listing_question(creds, max_entries);
  for (const auto& e : reply.entries()) {
    if (!is_dot(e.name()) && S_ISDIR(e.type()) && e.ino() != 0) listings_.want(e.ino(), question);
  }
  start_listings_ahead();
}

void FileClient::start_listings_ahead() {
  while (auto fetch = listings_.next(changes())) {
    spawn_checked(executor(), fetch_listing_ahead(*fetch));
  }
}

awaitable<void> FileClient::fetch_listing_ahead(ListingPrefetch::Fetch fetch) {
  Creds creds;
  creds.uid = fetch.question.uid;
  creds.gid = fetch.question.gid;
  auto reply = co_await mds_.call<proto::ReaddirReply>(
      rpc::kMdsReaddir, readdir_request(fetch.dir, 0, fetch.question.max_entries, true), creds,
      false);
  if (stopping_) co_return;
  listings_.arrived(fetch.dir, std::move(reply));
  listing_arrived_.cancel();  // wakes every readdir waiting on one in flight
  start_listings_ahead();
}

void FileClient::want_data_ahead(const proto::Inode& inode) {
  if (!exclusive_now() || !data_ahead_.enabled() || !S_ISREG(inode.mode()) || inode.inline_()) return;
  if (held(inode.ino())) return;  // open or lingering here: its state reads it
  data_ahead_.want({inode.ino(), inode.version(), inode.size(), layout_of(inode)});
}

void FileClient::start_data_ahead() {
  if (stopping_) return;
  while (auto fetch = data_ahead_.next()) spawn_checked(executor(), fetch_data_ahead(*fetch));
}

awaitable<void> FileClient::fetch_data_ahead(DataAhead::Fetch fetch) {
  // A state of its own: read_objects only needs the layout (and notes holes there).
  auto st = std::make_shared<FileState>(fetch.file.ino);
  st->layout = fetch.file.layout;
  st->size = fetch.file.size;
  fetch.piece->data = co_await read_objects(st, 0, fetch.file.size);
  fetch.piece->done.set();
  data_ahead_.finished(fetch.file.ino);
  start_data_ahead();
}

void FileClient::take_data_ahead(FileState& st) {
  const Known* k = known(st.ino);
  if (!k || k->inode.ino() != st.ino) return;
  if (auto piece = data_ahead_.take(st.ino, k->inode.version())) {
    st.readahead[0] = std::move(piece);
    start_data_ahead();  // its bytes and credits are free again
  }
}

}  // namespace dfs::client
