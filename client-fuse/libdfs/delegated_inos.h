// DelegatedInos: the inode numbers the MDS delegated to this mount (kMdsAllocInos), from
// which the creates it answers itself take theirs (deferred_namespace.cc). A range is
// fetched when the last one is used up; numbers of a range never used are simply lost
// (the MDS never hands them out again). The range belongs to the session it was fetched
// under: an eviction forgets it.
//
// Owned by the FileClient, on its I/O thread.
#pragma once

#include <cstdint>
#include <functional>

#include "common/proto/mds.pb.h"
#include "common/rpc/asio.h"
#include "common/status/status.h"

namespace dfs::client {

class DelegatedInos {
 public:
  // Asks the MDS for `count` fresh numbers (kMdsAllocInos).
  using Fetch = std::function<awaitable<Result<proto::AllocInosReply>>(uint32_t count)>;
  // Numbers fetched per range: one round trip per this many creates.
  static constexpr uint32_t kRangeSize = 4096;

  explicit DelegatedInos(Fetch fetch) : fetch_(std::move(fetch)) {}

  // A number never used before, fetching a new range when none is left. Takes that run
  // while a fetch waits may fetch too: the range answered last is used from then on.
  // Errors: the fetch's (kUnknownMethod also makes supported() false).
  awaitable<Result<uint64_t>> take();
  // False once the MDS answered that it does not delegate numbers: creates go to it.
  bool supported() const { return supported_; }
  // The session the range was fetched under is gone (evicted): fetch anew.
  void forget() { next_ = end_ = 0; }

 private:
  Fetch fetch_;
  uint64_t next_ = 0;  // the numbers not yet used: [next_, end_)
  uint64_t end_ = 0;
  bool supported_ = true;
};

}  // namespace dfs::client
