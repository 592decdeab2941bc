#include "common/raft/members_config.h"

#include <algorithm>
#include <set>

namespace dfs::raft {

Result<std::vector<RaftMember>> members_from_config(
    const Config& config, const std::string& type, const std::string& default_addr,
    const std::function<bool(const std::string& section)>& include) {
  std::vector<std::string> sections = config.sections_of_type(type);
  if (include) std::erase_if(sections, [&](const std::string& s) { return !include(s); });
  std::sort(sections.begin(), sections.end());
  std::vector<RaftMember> members;
  std::set<NodeId> ids;
  for (size_t i = 0; i < sections.size(); ++i) {
    RaftMember m;
    m.name = sections[i];
    m.addr = config.get_or(m.name, "addr", default_addr);
    auto id = config.get_int(m.name, "id", static_cast<int64_t>(i + 1));
    if (!id) return unexpected(std::move(id).error().with_context("[" + m.name + "] id"));
    if (*id <= 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "[" + m.name + "] id must be a positive integer");
    }
    m.id = static_cast<NodeId>(*id);
    if (!ids.insert(m.id).second) {
      return make_error(ErrorCode::kInvalidArgument, "[" + m.name + "] id " +
                                                         std::to_string(m.id) +
                                                         " is used by another " + type);
    }
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace dfs::raft
