#include "common/crush/crush_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <utility>

#include "common/crush/straw2.h"

namespace dfs::crush {
namespace {

// A host's best OSD in the straw2 race for one seed. Ties on cost are broken by OSD id, a
// total order that does not depend on which other OSDs exist, so adding an OSD can only
// insert it into the ranking, never reorder the others.
struct Pick {
  uint64_t cost;
  int32_t osd;
};

bool before(const Pick& a, const Pick& b) {
  return a.cost != b.cost ? a.cost < b.cost : a.osd < b.osd;
}

}  // namespace

uint32_t weight_to_fixed(double weight) {
  // The only floating point in this library, run once per OSD at build time. Rounding a
  // double to an integer is exact IEEE arithmetic, identical on every platform.
  if (!(weight > 0)) return 0;  // also catches NaN
  if (weight >= kMaxWeight) return static_cast<uint32_t>(kMaxWeight) * kWeightOne;
  return static_cast<uint32_t>(std::llround(weight * kWeightOne));
}

CrushMap CrushMap::build(std::vector<OsdEntry> osds) {
  // Round first: the tree then reports the weight placement actually uses, and NaN is gone
  // before it can break the sort's ordering.
  for (OsdEntry& osd : osds) {
    osd.weight = static_cast<double>(weight_to_fixed(osd.weight)) / kWeightOne;
  }
  // Sorting makes the map independent of input order: by id to drop duplicate ids
  // deterministically, then stably by host, which leaves each host's OSDs in id order.
  std::sort(osds.begin(), osds.end(), [](const OsdEntry& a, const OsdEntry& b) {
    return std::tie(a.id, a.host, a.weight, a.in) < std::tie(b.id, b.host, b.weight, b.in);
  });
  osds.erase(std::unique(osds.begin(), osds.end(),
                         [](const OsdEntry& a, const OsdEntry& b) { return a.id == b.id; }),
             osds.end());
  std::stable_sort(osds.begin(), osds.end(),
                   [](const OsdEntry& a, const OsdEntry& b) { return a.host < b.host; });

  CrushMap map;
  map.osd_count_ = osds.size();
  for (OsdEntry& osd : osds) {
    if (map.hosts_.empty() || map.hosts_.back().name != osd.host) {
      map.hosts_.push_back(HostInfo{osd.host, 0.0, {}});
    }
    map.hosts_.back().osds.push_back(std::move(osd));
  }
  for (HostInfo& host : map.hosts_) {
    const size_t begin = map.candidates_.size();
    uint64_t sum16 = 0;
    for (const OsdEntry& osd : host.osds) {
      const uint32_t weight16 = weight_to_fixed(osd.weight);  // exact: already rounded
      sum16 += weight16;
      if (osd.in && weight16 > 0) map.candidates_.push_back(Candidate{osd.id, weight16});
    }
    host.weight = static_cast<double>(sum16) / kWeightOne;
    if (map.candidates_.size() > begin) {
      map.candidate_end_.push_back(static_cast<uint32_t>(map.candidates_.size()));
    }
  }
  return map;
}

// Ranks every candidate OSD by its straw2 cost and walks the ranking, taking the first OSD
// of each host not yet used until `size` hosts are found. That is computed here as "each
// host's best OSD, then the best hosts", which is the same thing in one pass.
size_t CrushMap::place(uint32_t x, std::span<int32_t> out) const {
  const size_t want = std::min(out.size(), static_cast<size_t>(kMaxPlacement));
  if (want == 0) return 0;
  std::array<Pick, kMaxPlacement> best;  // ascending, the primary first
  size_t n = 0;
  uint32_t begin = 0;
  for (const uint32_t end : candidate_end_) {
    Pick host_best{straw2_cost(x, candidates_[begin].id, candidates_[begin].weight16),
                   candidates_[begin].id};
    for (uint32_t i = begin + 1; i < end; ++i) {
      const Pick p{straw2_cost(x, candidates_[i].id, candidates_[i].weight16), candidates_[i].id};
      if (before(p, host_best)) host_best = p;
    }
    begin = end;
    if (n == want && !before(host_best, best[n - 1])) continue;
    size_t pos = n < want ? n++ : want - 1;  // a full list drops its last entry
    for (; pos > 0 && before(host_best, best[pos - 1]); --pos) best[pos] = best[pos - 1];
    best[pos] = host_best;
  }
  for (size_t i = 0; i < n; ++i) out[i] = best[i].osd;
  return n;
}

std::vector<int32_t> CrushMap::place(uint32_t x, int size) const {
  if (size <= 0) return {};
  const size_t cap = std::min(
      {static_cast<size_t>(size), static_cast<size_t>(kMaxPlacement), candidate_end_.size()});
  std::vector<int32_t> out(cap);
  out.resize(place(x, std::span<int32_t>(out)));
  return out;
}

double CrushMap::total_weight() const {
  double sum = 0;
  for (const HostInfo& host : hosts_) sum += host.weight;
  return sum;
}

const std::string* CrushMap::host_of(int32_t osd) const {
  for (const HostInfo& host : hosts_) {
    for (const OsdEntry& entry : host.osds) {
      if (entry.id == osd) return &host.name;
    }
  }
  return nullptr;
}

}  // namespace dfs::crush
