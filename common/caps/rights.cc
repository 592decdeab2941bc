#include "common/caps/rights.h"

#include <array>

namespace dfs::caps {
namespace {

constexpr std::array<const char*, kRightCount> kNames = {"As", "Ax", "Fr", "Fc",
                                                         "Fw", "Fb", "Ds", "Dx"};

// One row per right: what another session may not hold at the same time, and why.
// Indexed by bit number; the relation is symmetric (each pair appears in both rows).
constexpr std::array<Rights, kRightCount> kConflicts = {
    // As: cached attributes go stale as soon as someone else changes attributes (Ax)
    // or the size (Fw and Fb extend files).
    kAttrExcl | kDataWrite | kDataBuffer,
    // Ax: attributes changed locally and sent later must be seen by nobody else
    // meanwhile (As), and two local versions cannot both win (Ax).
    kAttrShared | kAttrExcl,
    // Fr: reads from the OSDs would miss data still buffered by another client (Fb);
    // synchronous writes (Fw) are on the OSDs already, so they do not conflict.
    kDataBuffer,
    // Fc: cached pages go stale when anyone else writes, synchronously or not.
    kDataWrite | kDataBuffer,
    // Fw: changes data and size under others' cached attributes and pages (As, Fc) and
    // would be reordered against another's write-behind (Fb). Two synchronous
    // writers are compatible: the OSDs order their writes.
    kAttrShared | kDataCache | kDataBuffer,
    // Fb: buffered data and size are invisible to everyone else until flushed.
    kAttrShared | kDataRead | kDataCache | kDataWrite | kDataBuffer,
    // Ds: cached entries (and negative lookups) go stale under local changes (Dx).
    kDirExcl,
    // Dx: deferred creates, renames and unlinks are invisible to other caches (Ds)
    // and cannot be merged with another client's deferred changes (Dx).
    kDirShared | kDirExcl,
};

}  // namespace

const char* kind_name(InodeKind kind) { return kind == InodeKind::kFile ? "file" : "dir"; }

std::string Rights::to_string() const {
  std::string out;
  for (int i = 0; i < kRightCount; ++i) {
    if ((bits_ & (1u << i)) == 0) continue;
    if (!out.empty()) out += ' ';
    out += kNames[i];
  }
  return out.empty() ? "-" : out;
}

Rights conflicting_with(Rights held_by_other) {
  Rights out;
  for (int i = 0; i < kRightCount; ++i) {
    if (held_by_other.bits() & (1u << i)) out |= kConflicts[i];
  }
  return out;
}

}  // namespace dfs::caps
