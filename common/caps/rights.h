// Rights: what a session may do with one inode without asking the MDS, as a bitmask,
// and the conflict relation that decides which rights two different sessions may hold
// on one inode at the same time. Pure values and constexpr functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/caps/types.h"

namespace dfs::caps {

class Rights {
 public:
  constexpr Rights() = default;
  static constexpr Rights from_bits(uint32_t bits) { return Rights(bits); }
  constexpr uint32_t bits() const { return bits_; }

  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool contains(Rights r) const { return (bits_ & r.bits_) == r.bits_; }
  constexpr bool intersects(Rights r) const { return (bits_ & r.bits_) != 0; }

  constexpr Rights operator|(Rights r) const { return Rights(bits_ | r.bits_); }
  constexpr Rights operator&(Rights r) const { return Rights(bits_ & r.bits_); }
  // Set difference: the bits of *this that are not in r.
  constexpr Rights operator-(Rights r) const { return Rights(bits_ & ~r.bits_); }
  constexpr Rights& operator|=(Rights r) { return *this = *this | r; }
  constexpr Rights& operator&=(Rights r) { return *this = *this & r; }
  constexpr Rights& operator-=(Rights r) { return *this = *this - r; }
  constexpr bool operator==(const Rights&) const = default;

  // "As Fr Fc", "-" when empty: the names logs and traces use.
  std::string to_string() const;

 private:
  constexpr explicit Rights(uint32_t bits) : bits_(bits) {}
  uint32_t bits_ = 0;
};

// Files (attributes apply to directories too).
inline constexpr Rights kAttrShared = Rights::from_bits(1u << 0);  // As: cache attributes
inline constexpr Rights kAttrExcl = Rights::from_bits(1u << 1);    // Ax: change attrs locally
inline constexpr Rights kDataRead = Rights::from_bits(1u << 2);    // Fr: read from the OSDs
inline constexpr Rights kDataCache = Rights::from_bits(1u << 3);   // Fc: keep pages, read ahead
inline constexpr Rights kDataWrite = Rights::from_bits(1u << 4);   // Fw: write synchronously
inline constexpr Rights kDataBuffer = Rights::from_bits(1u << 5);  // Fb: write-behind, size
// Directories.
inline constexpr Rights kDirShared = Rights::from_bits(1u << 6);  // Ds: cache entries
inline constexpr Rights kDirExcl = Rights::from_bits(1u << 7);    // Dx: change entries locally
inline constexpr int kRightCount = 8;

inline constexpr Rights kNoRights{};
inline constexpr Rights kFileRights =
    kAttrShared | kAttrExcl | kDataRead | kDataCache | kDataWrite | kDataBuffer;
inline constexpr Rights kDirRights = kAttrShared | kAttrExcl | kDirShared | kDirExcl;
// Rights the grant policy gives only to a session that is alone in wanting anything on
// the inode: each lets the holder change state that others would have to ask it for.
inline constexpr Rights kExclusiveRights = kAttrExcl | kDataBuffer | kDirExcl;

// The rights that make sense on an inode of this kind.
constexpr Rights valid_rights(InodeKind kind) {
  return kind == InodeKind::kFile ? kFileRights : kDirRights;
}

// The bits one session may not hold while a different session holds `held_by_other`
// on the same inode. Symmetric: b is in conflicting_with(a) iff a is in
// conflicting_with(b) (rights_test checks it bit by bit).
Rights conflicting_with(Rights held_by_other);

// True when two different sessions may not hold `a` and `b` on one inode at once.
inline bool conflicts(Rights a, Rights b) { return conflicting_with(a).intersects(b); }

}  // namespace dfs::caps
