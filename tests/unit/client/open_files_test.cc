// OpenFiles: handle numbers, a fenced file's handles, held states that were replaced,
// an eviction's removal of lost states, and the writing opens a read share's answer is
// checked against.
#include "client-fuse/libdfs/open_files.h"

#include <doctest/doctest.h>

#include <optional>
#include <set>

#include "tests/support/doctest_result.h"

namespace dfs::client {
namespace {

std::shared_ptr<Handle> handle_on(const std::shared_ptr<FileState>& st, uint64_t ino) {
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->state = st;
  return h;
}

TEST_CASE("client/open_files: handles get numbers never used before, and go once") {
  OpenFiles files;
  std::set<Fh> seen;
  for (int i = 0; i < 5; ++i) CHECK(seen.insert(files.add(handle_on(nullptr, 10 + i))).second);
  const Fh first = *seen.begin();
  auto removed = files.remove(first);
  REQUIRE(removed);
  CHECK(removed->ino == 10);
  CHECK_FALSE(files.remove(first));  // a second release of the same number finds nothing
  CHECK_FALSE(files.find(first));
  CHECK(seen.insert(files.add(handle_on(nullptr, 20))).second);  // not the freed number
  CHECK(files.handles().size() == 5);

  auto missing = files.handle(first);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("client/open_files: a fenced file's handles fail, a new open's does not") {
  OpenFiles files;
  auto st = files.hold(7);
  const Fh old_fh = files.add(handle_on(st, 7));
  DFS_CHECK_OK(files.handle(old_fh));

  // The eviction: the state had writes the MDS did not have; it leaves the table.
  st->fenced = true;
  auto lost = files.drop_if([](const FileState& s) { return s.fenced; });
  REQUIRE(lost.size() == 1);
  CHECK(lost[0] == st);
  CHECK_FALSE(files.held(7));
  auto fenced = files.handle(old_fh);
  REQUIRE_FALSE(fenced);
  CHECK(fenced.error().code() == ErrorCode::kFenced);
  REQUIRE(files.find(old_fh));  // still there for its release

  // A new open makes a new state; the old handle's release must not drop it.
  auto fresh = files.hold(7);
  const Fh new_fh = files.add(handle_on(fresh, 7));
  DFS_CHECK_OK(files.handle(new_fh));
  CHECK_FALSE(files.drop(st));
  CHECK(files.held(7) == fresh);
  CHECK(files.drop(fresh));
  CHECK_FALSE(files.held(7));
  CHECK_FALSE(files.drop(fresh));
}

TEST_CASE("client/open_files: states_where copies what it picks, drop_if keeps the rest") {
  OpenFiles files;
  for (uint64_t ino = 1; ino <= 6; ++ino) files.hold(ino)->handles = static_cast<int>(ino % 2);
  auto open = files.states_where([](const FileState& st) { return st.handles > 0; });
  CHECK(open.size() == 3);
  for (auto& st : open) files.drop(st);  // the copy outlives changes of the table
  CHECK(files.states().size() == 3);
  for (const auto& [ino, st] : files.states()) CHECK(ino % 2 == 0);
  auto gone = files.drop_if([](const FileState& st) { return st.ino == 4; });
  REQUIRE(gone.size() == 1);
  CHECK(gone[0]->ino == 4);
  CHECK(files.held(2));
  CHECK(files.held(6));
}

TEST_CASE("client/open_files: a share's answer is current only if no writing open was sent since") {
  OpenFiles files;
  const auto quiet = files.write_open_mark();
  CHECK(files.no_write_open_since(quiet));
  std::optional<OpenFiles::WriteOpen> writing;
  writing.emplace(files);
  CHECK_FALSE(files.no_write_open_since(quiet));  // sent after the mark
  const auto during = files.write_open_mark();
  CHECK_FALSE(files.no_write_open_since(during));  // in flight when the request went
  writing.reset();
  CHECK_FALSE(files.no_write_open_since(during));  // answered since: still not current
  const auto after = files.write_open_mark();
  CHECK(files.no_write_open_since(after));
  { OpenFiles::WriteOpen another(files); }
  CHECK_FALSE(files.no_write_open_since(after));
}

}  // namespace
}  // namespace dfs::client
