// Striping: where the bytes of a regular file live among its data objects, as its
// Layout says. Pure functions without I/O, shared by the file client (on its I/O
// thread) and the unit tests. Object i of a plainly chunked file holds the file's bytes
// [i * object_size, (i + 1) * object_size); a layout with stripe_count > 1 spreads
// stripe units round-robin over stripe_count objects (RAID-0, as CephFS does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/proto/mds.pb.h"

namespace dfs::client {

inline constexpr uint64_t kDefaultObjectSize = 4u << 20;
inline constexpr const char* kDefaultDataPool = "data";

// A layout with every default filled in and its numbers validated.
struct StripeLayout {
  uint64_t object_size = kDefaultObjectSize;
  uint64_t stripe_unit = kDefaultObjectSize;  // == object_size for plain chunking
  uint64_t stripe_count = 1;
  std::string pool = kDefaultDataPool;

  bool plain() const { return stripe_count == 1; }
};

// The file's own layout, its missing fields taken from `fallback` (the file system's
// default layout), then from the built-in defaults. A stripe unit that does not divide
// the object size, or a stripe count of 0 or 1, means plain chunking.
StripeLayout effective_layout(const proto::Layout& layout, const proto::Layout& fallback);

// "<ino hex>.<index as 8 hex digits>", the data object's name.
std::string object_name(uint64_t ino, uint64_t index);

// One piece of a file range that lies in one object.
struct ObjectExtent {
  uint64_t object_index = 0;
  uint64_t object_offset = 0;
  uint64_t length = 0;
  uint64_t buffer_offset = 0;  // where the piece sits in the caller's buffer

  bool operator==(const ObjectExtent&) const = default;
};

// Splits the file range [offset, offset + length) into object pieces in file order;
// pieces contiguous both in one object and in the buffer are merged.
std::vector<ObjectExtent> map_range(const StripeLayout& layout, uint64_t offset, uint64_t length);

// How many bytes object `index` holds of a file that is `file_size` long: what the
// object must be truncated to when the file shrinks to `file_size` (0: remove it).
uint64_t object_bytes_below(const StripeLayout& layout, uint64_t index, uint64_t file_size);

// The objects that can hold bytes in [from, to), in index order: those to truncate or
// remove when a file shrinks from `to` bytes to `from`. Empty when from >= to.
std::vector<uint64_t> objects_in_range(const StripeLayout& layout, uint64_t from, uint64_t to);

}  // namespace dfs::client
