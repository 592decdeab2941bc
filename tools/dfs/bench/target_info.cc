#include "tools/dfs/bench/target_info.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

namespace dfs::bench {
namespace {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo (octal).
std::string unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string digits = field.substr(i + 1, 3);
      if (digits.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

bool is_within(const std::string& path, const std::string& mountpoint) {
  if (mountpoint == "/") return true;
  return path.compare(0, mountpoint.size(), mountpoint) == 0 &&
         (path.size() == mountpoint.size() || path[mountpoint.size()] == '/');
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The replicas of one rank in words.
std::string describe_rank(uint32_t rank, const std::vector<const MetadataReplica*>& replicas) {
  bool replicated = false;
  for (const auto* r : replicas) replicated = replicated || r->replicated;
  std::vector<std::string> leading, following, electing, unreachable;
  for (const auto* r : replicas) {
    if (!r->error.empty()) {
      unreachable.push_back(r->name);
    } else if (r->role == "leader") {
      leading.push_back(r->name);
    } else if (r->role == "follower") {
      following.push_back(r->name);
    } else if (r->replicated) {
      electing.push_back(r->name);  // a candidate: no leader it knows of
    }
  }
  if (!replicated) {
    // Only a replica that answers says it is one: a single MDS does not know the question.
    if (unreachable.empty() && replicas.size() == 1) {
      return fmt::format("rank {} on one MDS ({}) with its own log, not replicated (the "
                         "default is 3 replicas)",
                         rank, replicas.front()->name);
    }
    return fmt::format("rank {} on {} MDS, none answering ({}): replication unknown", rank,
                       replicas.size(), join(unreachable));
  }
  std::string members;
  auto add = [&members](const std::vector<std::string>& names, const char* doing) {
    if (!names.empty()) members += (members.empty() ? "" : "; ") + join(names) + " " + doing;
  };
  add(leading, "leading");
  add(following, "following");
  add(electing, "electing");
  add(unreachable, "not answering");
  return fmt::format("rank {} replicated by a Raft group of {} MDS ({}){}", rank, replicas.size(),
                     members, replicas.size() == 3 ? ", the default" : " (the default is 3)");
}

}  // namespace

std::optional<MountEntry> mount_of(const std::string& mountinfo, const std::string& path) {
  std::optional<MountEntry> best;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    // id parent major:minor root mountpoint options [optional...] - fstype source super
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 2 >= f.size()) continue;
    MountEntry entry{unescape(f[4]), f[dash + 1], unescape(f[dash + 2])};
    if (!is_within(path, entry.mountpoint)) continue;
    // Later lines are mounted later: on an equal mount point the last one is on top.
    if (!best || entry.mountpoint.size() >= best->mountpoint.size()) best = std::move(entry);
  }
  return best;
}

std::string describe_metadata(const std::vector<MetadataReplica>& replicas) {
  if (replicas.empty()) return "no MDS in the cluster map";
  std::map<uint32_t, std::vector<const MetadataReplica*>> ranks;
  for (const auto& r : replicas) ranks[r.rank].push_back(&r);
  std::string out;
  for (const auto& [rank, members] : ranks) {
    out += (out.empty() ? "" : "; ") + describe_rank(rank, members);
  }
  return out;
}

}  // namespace dfs::bench
