#include "common/caps/rights.h"

#include <doctest/doctest.h>

namespace dfs::caps {
namespace {

Rights bit(int i) { return Rights::from_bits(1u << i); }

TEST_CASE("caps/rights: the conflict relation is symmetric") {
  for (int a = 0; a < kRightCount; ++a) {
    for (int b = 0; b < kRightCount; ++b) {
      CHECK_MESSAGE(conflicts(bit(a), bit(b)) == conflicts(bit(b), bit(a)),
                    bit(a).to_string() << " vs " << bit(b).to_string());
    }
  }
}

TEST_CASE("caps/rights: the table as specified") {
  CHECK(conflicting_with(kAttrShared) == (kAttrExcl | kDataWrite | kDataBuffer));
  CHECK(conflicting_with(kAttrExcl) == (kAttrShared | kAttrExcl));
  CHECK(conflicting_with(kDataRead) == kDataBuffer);
  CHECK(conflicting_with(kDataCache) == (kDataWrite | kDataBuffer));
  CHECK(conflicting_with(kDataWrite) == (kAttrShared | kDataCache | kDataBuffer));
  CHECK(conflicting_with(kDataBuffer) ==
        (kAttrShared | kDataRead | kDataCache | kDataWrite | kDataBuffer));
  CHECK(conflicting_with(kDirShared) == kDirExcl);
  CHECK(conflicting_with(kDirExcl) == (kDirShared | kDirExcl));
}

TEST_CASE("caps/rights: readers and synchronous writers share, buffering excludes") {
  CHECK_FALSE(conflicts(kAttrShared | kDataRead | kDataCache, kAttrShared | kDataRead));
  CHECK_FALSE(conflicts(kDataWrite | kDataRead, kDataWrite | kDataRead));
  CHECK(conflicts(kDataBuffer, kDataRead));
  CHECK_FALSE(conflicts(kDirShared, kDirShared));
  CHECK_FALSE(conflicts(kNoRights, kFileRights | kDirRights));
  // File and directory rights never meet, but attributes apply to both.
  CHECK_FALSE(conflicts(kDataBuffer, kDirExcl));
}

TEST_CASE("caps/rights: set operations and names") {
  Rights r = kAttrShared | kDataRead;
  CHECK(r.contains(kDataRead));
  CHECK_FALSE(r.contains(kDataCache));
  CHECK((r - kDataRead) == kAttrShared);
  CHECK(r.to_string() == "As Fr");
  CHECK(kNoRights.to_string() == "-");
  CHECK((kFileRights | kDirRights).to_string() == "As Ax Fr Fc Fw Fb Ds Dx");
  CHECK(valid_rights(InodeKind::kDir).contains(kDirExcl));
  CHECK_FALSE(valid_rights(InodeKind::kDir).contains(kDataRead));
}

}  // namespace
}  // namespace dfs::caps
