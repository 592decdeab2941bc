// DelegatedInos: numbers come from the fetched range in order and a new range is
// fetched only when it is used up; an MDS without kMdsAllocInos turns delegation off;
// an eviction forgets the range.
#include "client-fuse/libdfs/delegated_inos.h"

#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <vector>

#include "tests/support/doctest_result.h"

namespace dfs::client {
namespace {

// Runs `task` to its end on a fresh io_context.
template <class T>
T run(awaitable<T> task) {
  asio::io_context io;
  std::optional<T> out;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    if (e) std::rethrow_exception(e);
    out = std::move(value);
  });
  io.run();
  return std::move(*out);
}

// An MDS stand-in that hands out ranges of `size` numbers from `first` on.
struct FakeMds {
  uint64_t next_first = 1000;
  uint32_t size = 3;
  std::vector<uint32_t> asked;  // the counts asked for, one per fetch
  std::optional<Error> refuse;

  DelegatedInos::Fetch fetch() {
    return [this](uint32_t count) -> awaitable<Result<proto::AllocInosReply>> {
      asked.push_back(count);
      if (refuse) co_return unexpected(*refuse);
      proto::AllocInosReply reply;
      reply.set_first(next_first);
      reply.set_count(size);
      next_first += 100;
      co_return reply;
    };
  }
};

TEST_CASE("client/delegated_inos: a range is used up in order before the next is fetched") {
  FakeMds mds;
  DelegatedInos inos(mds.fetch());
  std::vector<uint64_t> taken;
  for (int i = 0; i < 5; ++i) {
    auto ino = run(inos.take());
    DFS_REQUIRE_OK(ino);
    taken.push_back(*ino);
  }
  CHECK(taken == std::vector<uint64_t>{1000, 1001, 1002, 1100, 1101});
  REQUIRE(mds.asked.size() == 2);
  CHECK(mds.asked[0] == DelegatedInos::kRangeSize);

  inos.forget();  // evicted: the rest of the range was the old session's
  auto after = run(inos.take());
  DFS_REQUIRE_OK(after);
  CHECK(*after == 1200);
  CHECK(mds.asked.size() == 3);
  CHECK(inos.supported());
}

TEST_CASE("client/delegated_inos: an MDS that does not delegate turns it off, other errors do not") {
  FakeMds mds;
  DelegatedInos inos(mds.fetch());
  mds.refuse = Error(ErrorCode::kUnavailable, "no MDS");
  auto failed = run(inos.take());
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code() == ErrorCode::kUnavailable);
  CHECK(inos.supported());  // tried again at the next create

  mds.refuse = Error(ErrorCode::kUnknownMethod, "method 330 is not served by the MDS");
  REQUIRE_FALSE(run(inos.take()));
  CHECK_FALSE(inos.supported());

  mds.refuse.reset();
  mds.size = 0;
  auto empty = run(inos.take());
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code() == ErrorCode::kInternal);
}

}  // namespace
}  // namespace dfs::client
