#include "client-fuse/libdfs/striping.h"

#include <algorithm>
#include <cstdio>

namespace dfs::client {

StripeLayout effective_layout(const proto::Layout& layout, const proto::Layout& fallback) {
  StripeLayout out;
  const proto::Layout& numbers = layout.object_size() != 0 ? layout : fallback;
  if (numbers.object_size() != 0) out.object_size = numbers.object_size();
  out.stripe_unit = out.object_size;
  out.stripe_count = 1;
  uint64_t unit = numbers.stripe_unit();
  uint64_t count = numbers.stripe_count();
  if (count > 1 && unit != 0 && unit <= out.object_size && out.object_size % unit == 0) {
    out.stripe_unit = unit;
    out.stripe_count = count;
  }
  if (!layout.pool().empty()) {
    out.pool = layout.pool();
  } else if (!fallback.pool().empty()) {
    out.pool = fallback.pool();
  }
  return out;
}

std::string object_name(uint64_t ino, uint64_t index) {
  char name[40];
  std::snprintf(name, sizeof name, "%llx.%08llx", static_cast<unsigned long long>(ino),
                static_cast<unsigned long long>(index));
  return name;
}

namespace {

// Where file byte `offset` lives, and how many bytes from there stay in the same stripe
// unit (plain chunking: the same object).
struct Position {
  uint64_t index;
  uint64_t object_offset;
  uint64_t run;
};

Position locate(const StripeLayout& l, uint64_t offset) {
  if (l.plain()) {
    uint64_t in_object = offset % l.object_size;
    return {offset / l.object_size, in_object, l.object_size - in_object};
  }
  uint64_t units_per_object = l.object_size / l.stripe_unit;
  uint64_t block = offset / l.stripe_unit;
  uint64_t stripe = block / l.stripe_count;
  uint64_t position = block % l.stripe_count;
  uint64_t object_set = stripe / units_per_object;
  uint64_t in_unit = offset % l.stripe_unit;
  return {object_set * l.stripe_count + position,
          (stripe % units_per_object) * l.stripe_unit + in_unit, l.stripe_unit - in_unit};
}

}  // namespace

std::vector<ObjectExtent> map_range(const StripeLayout& layout, uint64_t offset, uint64_t length) {
  std::vector<ObjectExtent> out;
  uint64_t done = 0;
  while (done < length) {
    Position p = locate(layout, offset + done);
    uint64_t n = std::min(p.run, length - done);
    // Pieces of one object that follow each other in the buffer join into one.
    if (!out.empty() && out.back().object_index == p.index &&
        out.back().object_offset + out.back().length == p.object_offset) {
      out.back().length += n;
    } else {
      out.push_back(ObjectExtent{p.index, p.object_offset, n, done});
    }
    done += n;
  }
  return out;
}

uint64_t object_bytes_below(const StripeLayout& l, uint64_t index, uint64_t file_size) {
  uint64_t set_bytes = l.object_size * l.stripe_count;
  uint64_t object_set = index / l.stripe_count;
  uint64_t position = index % l.stripe_count;
  uint64_t set_start = object_set * set_bytes;
  if (file_size <= set_start) return 0;
  uint64_t in_set = std::min(file_size - set_start, set_bytes);
  uint64_t stripe_bytes = l.stripe_unit * l.stripe_count;
  uint64_t full_stripes = in_set / stripe_bytes;
  uint64_t rest = in_set % stripe_bytes;
  uint64_t first = position * l.stripe_unit;
  uint64_t partial = rest > first ? std::min(rest - first, l.stripe_unit) : 0;
  return full_stripes * l.stripe_unit + partial;
}

std::vector<uint64_t> objects_in_range(const StripeLayout& l, uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  if (from >= to) return out;
  if (l.plain()) {
    for (uint64_t i = from / l.object_size; i <= (to - 1) / l.object_size; ++i) out.push_back(i);
    return out;
  }
  uint64_t set_bytes = l.object_size * l.stripe_count;
  for (uint64_t set = from / set_bytes; set <= (to - 1) / set_bytes; ++set) {
    for (uint64_t i = 0; i < l.stripe_count; ++i) out.push_back(set * l.stripe_count + i);
  }
  return out;
}

}  // namespace dfs::client
