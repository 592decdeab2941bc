#include "mon/service/quorum_config.h"

#include <algorithm>
#include <set>

namespace dfs::mon {

Result<std::vector<MonMember>> quorum_from_config(const Config& config,
                                                  const std::string& default_addr) {
  std::vector<std::string> sections = config.sections_of_type("mon");
  std::sort(sections.begin(), sections.end());
  std::vector<MonMember> members;
  std::set<raft::NodeId> ids;
  for (size_t i = 0; i < sections.size(); ++i) {
    MonMember m;
    m.name = sections[i];
    m.addr = config.get_or(m.name, "addr", default_addr);
    auto id = config.get_int(m.name, "id", static_cast<int64_t>(i + 1));
    if (!id) return unexpected(std::move(id).error().with_context("[" + m.name + "] id"));
    if (*id <= 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "[" + m.name + "] id must be a positive integer");
    }
    m.id = static_cast<raft::NodeId>(*id);
    if (!ids.insert(m.id).second) {
      return make_error(ErrorCode::kInvalidArgument, "[" + m.name + "] id " +
                                                         std::to_string(m.id) +
                                                         " is used by another monitor");
    }
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace dfs::mon
