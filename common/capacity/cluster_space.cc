#include "common/capacity/cluster_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace dfs::capacity {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

}  // namespace

OsdSpace space_of(int32_t osd, const proto::StatFsReply& reply) {
  return OsdSpace{osd,
                  reply.total_bytes(),
                  reply.used_bytes(),
                  reply.available_bytes(),
                  reply.objects(),
                  reply.device_id(),
                  reply.device_name()};
}

std::string ClusterSpace::sharing() const {
  if (devices.size() >= osds) return "";
  return fmt::format("{} OSDs on {} device{}", osds, devices.size(), devices.size() == 1 ? "" : "s");
}

size_t ClusterSpace::device_number_of(int32_t osd) const {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (std::count(devices[i].osds.begin(), devices[i].osds.end(), osd)) return i + 1;
  }
  return 0;
}

ClusterSpace sum_space(const std::vector<OsdSpace>& osds) {
  ClusterSpace out;
  std::map<std::string, size_t> index_of;  // device id -> index in out.devices
  for (const auto& o : osds) {
    ++out.osds;
    out.objects = saturating_add(out.objects, o.objects);
    auto found = o.device_id.empty() ? index_of.end() : index_of.find(o.device_id);
    if (found == index_of.end()) {
      if (!o.device_id.empty()) index_of[o.device_id] = out.devices.size();
      out.devices.push_back({o.device_name, {o.osd}, o.total_bytes, o.used_bytes, o.available_bytes});
      continue;
    }
    DeviceSpace& d = out.devices[found->second];
    d.osds.push_back(o.osd);
    d.total_bytes = std::max(d.total_bytes, o.total_bytes);
    d.used_bytes = std::max(d.used_bytes, o.used_bytes);
    d.available_bytes = std::min(d.available_bytes, o.available_bytes);
  }
  for (const auto& d : out.devices) {
    out.total_bytes = saturating_add(out.total_bytes, d.total_bytes);
    out.used_bytes = saturating_add(out.used_bytes, d.used_bytes);
    out.available_bytes = saturating_add(out.available_bytes, d.available_bytes);
  }
  return out;
}

}  // namespace dfs::capacity
