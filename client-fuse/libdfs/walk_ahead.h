// WalkAhead: what is fetched ahead of a tree walk (rsync, tar -c, find, du) and does the
// fetching: the first batch of each subdirectory of a directory the walk just listed
// (ListingPrefetch says when one may be used), and the whole data of object files a
// listing showed (DataAhead).
//
// Its freshness rules (ListingPrefetch): the owner tells of each change whose reach it
// knows (touched()), which drops the listings it reaches, and its change counter
// (`changes`) moves with every other change: a listing is served only if that counter
// has not moved since it was asked for. Whether to serve at all is the owner's: only
// while it holds exclusive caching (FileClient::exclusive_now), where every change
// passes through it; data fetched ahead is taken only at the inode version it was
// fetched for.
//
// Owned by the FileClient on its I/O thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "client-fuse/libdfs/creds.h"
#include "client-fuse/libdfs/data_ahead.h"
#include "client-fuse/libdfs/listing_prefetch.h"
#include "client-fuse/libdfs/object_io.h"
#include "client-fuse/libdfs/striping.h"
#include "common/rpc/asio.h"

namespace dfs::client {

class WalkAhead {
 public:
  struct Options {
    uint32_t prefetch_listings = 16;  // subdirectory listings in flight at most (0: off)
    uint64_t data_ahead_bytes = 32u << 20;  // data fetched ahead held at most (0: off)
  };
  // A listing of `dir` from its start, with attributes, for `creds`, asked of the MDS.
  using FetchListing = std::function<awaitable<Result<proto::ReaddirReply>>(
      uint64_t dir, Creds creds, uint32_t max_entries)>;
  // Fetches run on `executor` (the I/O thread); `changes`: the owner's counter of
  // changes whose reach it does not tell.
  WalkAhead(asio::any_io_executor executor, FetchListing fetch_listing, ObjectIo& io,
            Options options, std::function<uint64_t()> changes);

  // A kMdsReaddir request; with `plus`, inline files' data up to `inline_max` comes along.
  static proto::ReaddirRequest request(uint64_t dir, uint64_t cookie, uint32_t max_entries,
                                       bool plus, uint32_t inline_max);

  // ---- Listings ----
  bool listings_enabled() const { return listings_.enabled(); }
  // The listing of `dir` (from its start, with attributes) fetched ahead for this
  // question, once one in flight arrives; nullopt: there is none, or it went stale.
  awaitable<std::optional<proto::ReaddirReply>> fetched_listing(uint64_t dir, const Creds& creds,
                                                                uint32_t max_entries);
  // A walk's listing `reply` (from the start, with attributes) was answered: the
  // subdirectories it names are listed ahead.
  void walk_listed(const Creds& creds, uint32_t max_entries, const proto::ReaddirReply& reply);
  // A change through the owner reaches `dirs` (their names) and `inodes`.
  void touched(const std::vector<uint64_t>& dirs, const std::vector<uint64_t>& inodes) {
    listings_.touched(dirs, inodes);
  }
  // Something changed whose reach the owner does not tell: no listing held now serves.
  void forget_listings() { listings_.forget_all(); }

  // ---- Object files' data ----
  bool data_enabled() const { return data_.enabled(); }
  // Whether fetching `inode` (a listing showed it) whole is worth asking for: an object
  // file, with fetching data on.
  bool wants_data(const proto::Inode& inode) const;
  // `inode` is to be fetched whole. The caller checked wants_data() first (it spares
  // working out `layout`, the effective layout, for the others) and that nobody has it
  // open here. Fetches start at start_data().
  void want_data(const proto::Inode& inode, const StripeLayout& layout);
  void start_data();
  // The whole data of `ino` fetched ahead (or in flight) for inode version `version`,
  // taken out; null: none. The next fetches start.
  std::shared_ptr<Prefetch> take_data(uint64_t ino, uint64_t version);
  void drop_data(uint64_t ino) { data_.drop(ino); }

  // Unmounting: nothing more is fetched, and walks waiting for a listing in flight stop
  // waiting (they ask the MDS).
  void stop();
  // For the unmount's log.
  const ListingPrefetch& listings() const { return listings_; }
  const DataAhead& data() const { return data_; }

 private:
  ListingPrefetch::Question question(const Creds& creds, uint32_t max_entries) const;
  void start_listings();
  awaitable<void> fetch_listing(ListingPrefetch::Fetch fetch);
  awaitable<void> fetch_data(DataAhead::Fetch fetch);

  asio::any_io_executor executor_;
  FetchListing fetch_listing_;
  ObjectIo& io_;
  Options options_;
  std::function<uint64_t()> changes_;
  ListingPrefetch listings_;
  DataAhead data_;
  asio::steady_timer listing_arrived_;  // cancelled whenever a listing fetched ahead ends
  bool stopped_ = false;
};

}  // namespace dfs::client
