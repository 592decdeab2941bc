// The CRUSH map (root -> host -> osd) and the placement function every client and daemon
// runs to find a PG's OSDs without asking anyone. A CrushMap is immutable once built, so one
// instance can be shared by any number of threads; map changes build a new one. The
// algorithm and its guarantees are described in common/crush/FORMAT.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/crush/hash.h"

namespace dfs::crush {

// One OSD as the monitor's OSD map describes it. `weight` is its CRUSH weight (by
// convention its capacity in TiB); `in` = false means it keeps its weight in the tree but
// receives no data.
struct OsdEntry {
  int32_t id;
  std::string host;
  double weight;
  bool in = true;
};

// A host of the tree as `dfs osd tree` shows it.
struct HostInfo {
  std::string name;
  double weight;               // sum of its OSDs' weights, out ones included
  std::vector<OsdEntry> osds;  // ascending id; weights as rounded to 16.16
};

// The largest `size` place() honours; replicated and erasure-coded pools stay far below.
inline constexpr int kMaxPlacement = 32;

// The largest weight representable in 16.16 fixed point; larger weights are clamped.
inline constexpr double kMaxWeight = 65535.0;

class CrushMap {
 public:
  // An empty map: place() returns nothing.
  CrushMap() = default;

  // Builds root -> host -> osd from the OSD list; hosts come from OsdEntry::host and weigh
  // the sum of their OSDs. Weights are rounded to 16.16 fixed point here, once, so the
  // placement path never touches floating point; negative and NaN weights count as 0 and
  // weights above kMaxWeight are clamped. The input order does not matter.
  // Requires: OSD ids are unique (of duplicates, the one sorting first by
  // (id, host, weight, in) is kept, so the result still does not depend on input order).
  static CrushMap build(std::vector<OsdEntry> osds);

  // Ordered OSD ids for placement seed `x` (callers use x = hash32(pg, pool)): `size` OSDs
  // on distinct hosts (failure domain host), fewer if fewer hosts have an in OSD with
  // weight > 0. Out and weight-0 OSDs are never chosen. The first element is the primary,
  // and place(x, k) is a prefix of place(x, k + 1). A pure function of (map, x, size); costs
  // one straw2 draw (~5 ns) per usable OSD. Requires: size <= kMaxPlacement (larger is
  // clamped).
  std::vector<int32_t> place(uint32_t x, int size) const;

  // The same placement written into `out`, for up to out.size() replicas; returns how many
  // were written. Never allocates.
  size_t place(uint32_t x, std::span<int32_t> out) const;

  // Hosts in ascending name order with their OSDs, for `dfs osd tree`.
  const std::vector<HostInfo>& hosts() const { return hosts_; }

  // Number of OSDs in the map, out and weight-0 ones included.
  size_t osd_count() const { return osd_count_; }

  // Sum of all OSD weights, out ones included.
  double total_weight() const;

  // The name of the host holding `osd`, or nullptr if the map has no such OSD. Linear in
  // the number of OSDs: for tools and tests, not for the data path.
  const std::string* host_of(int32_t osd) const;

 private:
  // An OSD that can receive data (in, weight > 0), laid out for the placement loop.
  struct Candidate {
    int32_t id;
    uint32_t weight16;
  };

  std::vector<HostInfo> hosts_;
  size_t osd_count_ = 0;
  // Candidates grouped by host: host i owns [candidate_end_[i-1], candidate_end_[i]).
  // Hosts without candidates are left out entirely.
  std::vector<Candidate> candidates_;
  std::vector<uint32_t> candidate_end_;
};

// Converts a weight to 16.16 fixed point the way build() does (round to nearest, clamped).
uint32_t weight_to_fixed(double weight);

}  // namespace dfs::crush
