// FileClient: directory listings, with what a tree walk gets fetched ahead of it
// (WalkAhead: listings and object files' data).
#include <sys/stat.h>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {

proto::ReaddirRequest FileClient::readdir_request(Ino ino, uint64_t cookie, uint32_t max_entries,
                                                  bool plus) const {
  return WalkAhead::request(ino, cookie, max_entries, plus,
                            exclusive_now() ? options_.readdir_inline_max : 0);
}

awaitable<Result<proto::ReaddirReply>> FileClient::readdir(Creds creds, Ino ino, uint64_t cookie,
                                                           uint32_t max_entries, bool plus) {
  const DirCache::ListingStamp stamp = listing_stamp();
  const bool alone_at_ask = defers_in(ino);
  const RecentListings::Question question{creds.uid, creds.gid, max_entries, plus};
  std::optional<proto::ReaddirReply> reply;
  if (cookie == 0 && listings_reusable()) reply = recent_.find(ino, question, started_changes());
  const bool listed_again = reply.has_value();
  // What a walk asks: a whole listing from its start, with attributes.
  // Not after a change whose outcome is unknown: the MDS may apply it after a listing
  // fetched ahead was stamped.
  const bool walk = !listed_again && plus && cookie == 0 && listings_reusable() &&
                    walk_.listings_enabled();
  if (walk) reply = co_await walk_.fetched_listing(ino, creds, max_entries);
  if (reply && !listed_again && listings_reusable() && mds_.mutations_running() == 0) {
    // Fetched ahead and handed out only if no change made since it was asked for reaches
    // it: with no mutating call running now, it reflects every change started here.
    recent_.keep(ino, question, started_changes(), *reply);
  }
  if (!reply) {
    const uint64_t started = started_changes();
    const bool quiet = cookie == 0 && listings_reusable() && mds_.mutations_running() == 0;
    auto fetched = co_await readdir_ahead_of_deferred(creds, ino, cookie, max_entries, plus);
    if (!fetched) {
      fetched = co_await mds_.call<proto::ReaddirReply>(
          rpc::kMdsReaddir, readdir_request(ino, cookie, max_entries, plus), creds, false);
    }
    if (!*fetched) co_return unexpected(std::move(*fetched).error());
    reply = std::move(**fetched);
    // The call carried, or waited for, every change deferred before it, or went ahead of
    // changes that leave it alone; a mutating call running beside it, or a change
    // started meanwhile, may have passed it.
    if (quiet && listings_reusable() && started_changes() == started) {
      recent_.keep(ino, question, started, *reply);
    }
  }
  if (walk) walk_.walk_listed(creds, max_entries, *reply);
  if (!listed_again) learn_names(ino, cookie, alone_at_ask, stamp, *reply);
  if (plus) {
    for (auto& e : *reply->mutable_entries()) {
      if (is_dot(e.name())) continue;
      // The kernel gets attributes only; the data waits for an open.
      if (e.inline_data_included()) {
        proto::Inode& inode = *e.mutable_inode();
        listed_.remember(inode.ino(), inode.version(), std::move(*inode.mutable_inline_data()));
        inode.clear_inline_data();
      }
      learn(e.inode());
      // Not when open or lingering here: its state reads it.
      if (!listed_again && exclusive_now() && walk_.wants_data(e.inode()) &&
          !held(e.inode().ino())) {
        walk_.want_data(e.inode(), layout_of(e.inode()));
      }
      overlay(*e.mutable_inode());
    }
    walk_.start_data();
  }
  co_return std::move(*reply);
}

awaitable<std::optional<Result<proto::ReaddirReply>>> FileClient::readdir_ahead_of_deferred(
    const Creds& creds, Ino dir, uint64_t cookie, uint32_t max_entries, bool plus) {
  // With nothing deferred the call goes alone anyway. Under rm -rf each directory's
  // listing would otherwise carry the unlinks of the one before and wait for their
  // commit (on the replicated rank, a majority's log sync).
  // The directory's own attributes do not matter: the kernel is given none for "." and
  // ".." (Vfs::readdir).
  if (!mds_.deferred_queue().pending() || touched_.touched(dir)) co_return std::nullopt;
  auto alone = co_await mds_.call_alone<proto::ReaddirReply>(
      rpc::kMdsReaddir, readdir_request(dir, cookie, max_entries, plus), creds, false);
  if (alone) {
    for (const auto& e : alone->entries()) {
      if (!is_dot(e.name()) && !untouched(e.ino())) co_return std::nullopt;
    }
  }
  ++reads_ahead_of_deferred_;
  co_return std::move(alone);
}

awaitable<Result<proto::ReaddirReply>> FileClient::list_ahead(Creds creds, Ino dir,
                                                              uint32_t max_entries) {
  auto alone = co_await readdir_ahead_of_deferred(creds, dir, 0, max_entries, true);
  if (alone) co_return std::move(*alone);
  co_return co_await mds_.call<proto::ReaddirReply>(
      rpc::kMdsReaddir, readdir_request(dir, 0, max_entries, true), creds, false);
}

DirCache::ListingStamp FileClient::listing_stamp() const {
  return {mds_.direct_changes(), rights_.generation()};
}

void FileClient::learn_names(Ino dir, uint64_t cookie, bool alone_at_ask,
                             const DirCache::ListingStamp& stamp,
                             const proto::ReaddirReply& reply) {
  // A change of names with an unknown outcome may still apply at the MDS, after any
  // listing: no listing is trusted from then on.
  if (!alone_at_ask || !defers_in(dir) || listing_stamp() != stamp ||
      mds_.uncertain_changes() > 0) {
    dirs_.listing_interrupted(dir);
    return;
  }
  std::vector<DirCache::ListedName> names;
  names.reserve(reply.entries_size());
  uint64_t next_cookie = cookie;
  for (const auto& e : reply.entries()) {
    next_cookie = e.cookie();
    if (!is_dot(e.name())) names.push_back({e.name(), e.ino()});
  }
  dirs_.listed(dir, cookie, stamp, std::move(names), next_cookie, reply.eof());
}

void FileClient::take_data_ahead(FileState& st) {
  const Known* k = known(st.ino);
  if (!k || k->inode.ino() != st.ino) return;
  if (auto piece = walk_.take_data(st.ino, k->inode.version())) st.readahead[0] = std::move(piece);
}

}  // namespace dfs::client
