// DeferredErrors: a failed deferred change is reported once by the fsync of each inode
// it concerned, not by an fsync of another file, and once by a sync of the whole mount.
#include "client-fuse/libdfs/deferred_errors.h"

#include <doctest/doctest.h>

#include <vector>

using dfs::Error;
using dfs::ErrorCode;
using dfs::client::DeferredErrors;

namespace {

constexpr uint64_t kDir = 10, kFile = 11, kOther = 12;

ErrorCode code_of(const dfs::Status& s) {
  REQUIRE_FALSE(s.has_value());
  return s.error().code();
}

}  // namespace

TEST_CASE("client/deferred_errors: each concerned inode reports it once, others never") {
  DeferredErrors errors;
  CHECK(errors.empty());
  std::vector<uint64_t> create{kDir, kFile};  // a create in kDir of kFile
  errors.note(Error(ErrorCode::kNoSpace, "create of f"), create);
  CHECK(errors.take_for(kOther).has_value());  // an unrelated file: nothing
  CHECK(code_of(errors.take_for(kFile)) == ErrorCode::kNoSpace);
  CHECK(errors.take_for(kFile).has_value());  // reported once
  CHECK(code_of(errors.take_for(kDir)) == ErrorCode::kNoSpace);
  // The mount's sync still reports it once, then nothing is left.
  CHECK(code_of(errors.take_all()) == ErrorCode::kNoSpace);
  CHECK(errors.take_all().has_value());
  CHECK(errors.empty());
}

TEST_CASE("client/deferred_errors: the first error of an inode is kept, and a sync clears all") {
  DeferredErrors errors;
  std::vector<uint64_t> file{kFile};
  errors.note(Error(ErrorCode::kFenced, "evicted"), file);
  errors.note(Error(ErrorCode::kNoSpace, "later"), file);
  errors.note(Error(ErrorCode::kIoError, "the mount's"), {});  // concerns no inode of its own
  CHECK(code_of(errors.take_all()) == ErrorCode::kFenced);
  CHECK(errors.take_for(kFile).has_value());  // the sync reported it
}

TEST_CASE("client/deferred_errors: past its bound, the next fsync of anything reports") {
  DeferredErrors errors(/*max_inodes=*/1);
  std::vector<uint64_t> two{kFile, kOther};
  errors.note(Error(ErrorCode::kNoSpace, "two files"), two);
  CHECK(code_of(errors.take_for(kFile)) == ErrorCode::kNoSpace);
  // kOther found no room: the next fsync of any inode reports the mount's error, once.
  CHECK(code_of(errors.take_for(kDir)) == ErrorCode::kNoSpace);
  CHECK(errors.take_for(kOther).has_value());
}
