#include "client-fuse/libdfs/delegated_inos.h"

namespace dfs::client {

awaitable<Result<uint64_t>> DelegatedInos::take() {
  if (next_ == end_) {
    auto range = co_await fetch_(kRangeSize);
    if (!range) {
      if (range.error().code() == ErrorCode::kUnknownMethod) supported_ = false;
      co_return unexpected(std::move(range).error());
    }
    if (range->count() == 0) {
      co_return make_error(ErrorCode::kInternal, "the MDS delegated an empty inode range");
    }
    next_ = range->first();
    end_ = range->first() + range->count();
  }
  co_return next_++;
}

}  // namespace dfs::client
